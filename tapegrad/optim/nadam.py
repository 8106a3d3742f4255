"""NAdam (Dozat 2016): Adam with Nesterov momentum, with the momentum-decay schedule
mu_t = beta1 * (1 - 0.5 * 0.96^(t * momentum_decay)).

Per parameter p with gradient g, step t = 1, 2, ... (PyTorch's formulation):

    g <- -g                                   if maximize
    p <- p * (1 - lr * wd)                    decoupled_weight_decay (NAdamW)
    g <- g + wd * p                           otherwise (L2 in the gradient)
    P <- P * mu_t                             state 'mu_product' (0-d, torch's scalar dtype)
    m <- m + (1 - beta1) * (g - m);  v <- beta2 * v + (1 - beta2) * g * g
    d = sqrt(v / (1 - beta2^t)) + eps
    p <- p - lr (1 - mu_t) / (1 - P) * g / d - lr mu_{t+1} / (1 - P mu_{t+1}) * m / d
"""
import numpy as np

from .._tensor import Tensor
from ._arrays import lerp_, scalar_dtype
from .optimizer import Optimizer, _no_grad_step

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        self._check_adam_args(lr, eps, betas, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure=None):
        """One update of every parameter that has a gradient. Returns closure() if given."""
        return self._step(closure)

    def _init_state(self, p, group):
        return {"step": self._new_step(),
                "mu_product": Tensor._of(np.ones((), scalar_dtype())),
                "exp_avg": Tensor._of(np.zeros_like(p._data)),
                "exp_avg_sq": Tensor._of(np.zeros_like(p._data))}

    def _update(self, group, params, states):
        beta1, beta2 = group["betas"]
        nadam([p._data for p in params], [p.grad._data for p in params],
              [s["exp_avg"]._data for s in states], [s["exp_avg_sq"]._data for s in states],
              [s["mu_product"]._data for s in states], [s["step"]._data for s in states],
              beta1=beta1, beta2=beta2, lr=group["lr"],
              weight_decay=group["weight_decay"], momentum_decay=group["momentum_decay"],
              eps=group["eps"], decoupled_weight_decay=group["decoupled_weight_decay"],
              maximize=group["maximize"])


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *, beta1, beta2, lr,
          weight_decay, momentum_decay, eps, decoupled_weight_decay, maximize):
    """The NAdam math on arrays; everything is updated in place (`mu_products` and
    `state_steps` are 0-d arrays)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, mu_product = exp_avgs[i], exp_avg_sqs[i], mu_products[i]
        state_steps[i] += 1
        step = float(state_steps[i])
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        # NOTE: in place, so the product is rounded to the state's dtype (float32) each
        # step exactly as torch's 0-d tensor is; the coefficients below use that value.
        mu_product *= mu
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        denom = np.sqrt(exp_avg_sq / bias_correction2)
        denom += eps
        mu_prod = float(mu_product)
        mu_product_next = mu_prod * mu_next
        param += (-lr * (1.0 - mu) / (1.0 - mu_prod)) * (grad / denom)
        param += ((-lr * mu_next) / (1.0 - mu_product_next)) * (exp_avg / denom)
