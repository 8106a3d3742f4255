"""Adam (with amsgrad) and AdamW (decoupled weight decay).

Per parameter p, gradient g, step t = 1, 2, ... (PyTorch's formulation):

    g <- -g                                   if maximize
    p <- p * (1 - lr * wd)                    AdamW (decoupled weight decay)
    g <- g + wd * p                           Adam with weight_decay (L2 in the gradient)
    m <- m + (1 - beta1) * (g - m)            first moment  (lerp)
    v <- beta2 * v + (1 - beta2) * g * g      second moment
    vmax <- max(vmax, v); use vmax for v      if amsgrad
    p <- p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
"""
import numpy as np

from ..tensor import Tensor
from ._arrays import lerp_
from .optimizer import Optimizer, _no_grad_step

__all__ = ["Adam", "AdamW", "adam"]


class Adam(Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        self._check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure=None):
        """One update of every parameter that has a gradient. Returns closure() if given."""
        loss = self._closure_loss(closure)
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            for p in params:
                st = self.state.setdefault(p, {})
                if len(st) == 0:  # lazy state init at the first step
                    st["step"] = Tensor._of(np.zeros((), np.float32))
                    st["exp_avg"] = Tensor._of(np.zeros_like(p._data))
                    st["exp_avg_sq"] = Tensor._of(np.zeros_like(p._data))
                    if group["amsgrad"]:
                        st["max_exp_avg_sq"] = Tensor._of(np.zeros_like(p._data))
            states = [self.state[p] for p in params]
            beta1, beta2 = group["betas"]
            adam([p._data for p in params], [p.grad._data for p in params],
                 [s["exp_avg"]._data for s in states], [s["exp_avg_sq"]._data for s in states],
                 [s["max_exp_avg_sq"]._data for s in states] if group["amsgrad"] else [],
                 [s["step"]._data for s in states],
                 amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                 weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"],
                 decoupled_weight_decay=group.get("decoupled_weight_decay", False))
            self._bump(params)
        return loss


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): the decay shrinks the
    weights directly instead of entering the moments. Default weight_decay=1e-2."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        for group in self.param_groups:
            group["decoupled_weight_decay"] = True


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad,
         beta1, beta2, lr, weight_decay, eps, maximize, decoupled_weight_decay=False):
    """The Adam / AdamW math on arrays; everything is updated in place (state_steps are
    0-d float32 arrays, incremented here)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_avg_sq, step_t = exp_avgs[i], exp_avg_sqs[i], state_steps[i]
        step_t += 1
        if weight_decay != 0:
            if decoupled_weight_decay:
                param *= 1 - lr * weight_decay
            else:
                grad = grad + weight_decay * param
        lerp_(exp_avg, grad, 1 - beta1)
        exp_avg_sq *= beta2
        exp_avg_sq += (1 - beta2) * grad * grad
        step = float(step_t)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5
        if amsgrad:
            np.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = np.sqrt(max_exp_avg_sqs[i]) / bias_correction2_sqrt + eps
        else:
            denom = np.sqrt(exp_avg_sq) / bias_correction2_sqrt + eps
        param += (-step_size) * exp_avg / denom
