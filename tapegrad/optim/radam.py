"""RAdam (Liu et al. 2019): Adam whose adaptive step is switched on only once the
variance of the adaptive rate is tractable, and then rectified.

Per parameter p with gradient g, step t = 1, 2, ... (PyTorch's formulation):

    g <- -g                                   if maximize
    p <- p * (1 - lr * wd)                    decoupled_weight_decay (RAdamW)
    g <- g + wd * p                           otherwise (L2 in the gradient)
    m <- m + (1 - beta1) * (g - m);  v <- beta2 * v + (1 - beta2) * g * g
    rho_inf = 2 / (1 - beta2) - 1;   rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t)
    m_hat = m / (1 - beta1^t)
    rho_t > 5:  p <- p - lr * m_hat * sqrt(1 - beta2^t) / (sqrt(v) + eps) * r_t,
                r_t = sqrt((rho_t - 4)(rho_t - 2) rho_inf / ((rho_inf - 4)(rho_inf - 2) rho_t))
    otherwise:  p <- p - lr * m_hat           (un-adapted momentum SGD)
"""
import numpy as np

from .._tensor import Tensor
from ._arrays import lerp_
from .optimizer import Optimizer, _no_grad_step

__all__ = ["RAdam", "radam"]


class RAdam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        self._check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure=None):
        """One update of every parameter that has a gradient. Returns closure() if given."""
        return self._step(closure)

    def _init_state(self, p, group):
        return {"step": self._new_step(), "exp_avg": Tensor._of(np.zeros_like(p._data)),
                "exp_avg_sq": Tensor._of(np.zeros_like(p._data))}

    def _update(self, group, params, states):
        beta1, beta2 = group["betas"]
        radam([p._data for p in params], [p.grad._data for p in params],
              [s["exp_avg"]._data for s in states], [s["exp_avg_sq"]._data for s in states],
              [s["step"]._data for s in states], beta1=beta1, beta2=beta2, lr=group["lr"],
              weight_decay=group["weight_decay"], eps=group["eps"],
              decoupled_weight_decay=group["decoupled_weight_decay"],
              maximize=group["maximize"])


def radam(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, beta1, beta2, lr,
          weight_decay, eps, decoupled_weight_decay, maximize):
    """The RAdam math on arrays; everything is updated in place."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq = exp_avgs[i], exp_avg_sqs[i]
        state_steps[i] += 1
        step = float(state_steps[i])
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        bias_corrected_exp_avg = exp_avg / bias_correction1
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * step * (beta2 ** step) / bias_correction2
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf
                    / ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive_lr = (bias_correction2 ** 0.5) / (np.sqrt(exp_avg_sq) + eps)
            param -= bias_corrected_exp_avg * lr * adaptive_lr * rect
        else:
            param -= bias_corrected_exp_avg * lr
