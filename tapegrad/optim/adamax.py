"""Adamax (Kingma & Ba 2015, section 7.1): Adam with the infinity norm in place of the
second moment.

Per parameter p with gradient g, step t = 1, 2, ... (PyTorch's formulation):

    g <- -g                                   if maximize
    g <- g + wd * p                           weight decay (L2 in the gradient)
    m <- m + (1 - beta1) * (g - m)            exp_avg (lerp)
    u <- max(beta2 * u, |g| + eps)            exp_inf
    p <- p - lr / (1 - beta1^t) * m / u
"""
import numpy as np

from .._tensor import Tensor
from ._arrays import lerp_
from .optimizer import Optimizer, _no_grad_step

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        self._check_adam_args(lr, eps, betas, weight_decay)
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure=None):
        """One update of every parameter that has a gradient. Returns closure() if given."""
        return self._step(closure)

    def _init_state(self, p, group):
        return {"step": self._new_step(), "exp_avg": Tensor._of(np.zeros_like(p._data)),
                "exp_inf": Tensor._of(np.zeros_like(p._data))}

    def _update(self, group, params, states):
        beta1, beta2 = group["betas"]
        adamax([p._data for p in params], [p.grad._data for p in params],
               [s["exp_avg"]._data for s in states], [s["exp_inf"]._data for s in states],
               [s["step"]._data for s in states], eps=group["eps"], beta1=beta1,
               beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
               maximize=group["maximize"])


def adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1, beta2, lr,
           weight_decay, maximize):
    """The Adamax math on arrays; everything is updated in place."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg, exp_inf = exp_avgs[i], exp_infs[i]
        state_steps[i] += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        lerp_(exp_avg, grad, 1 - beta1)
        exp_inf *= beta2
        np.maximum(exp_inf, np.abs(grad) + eps, out=exp_inf)
        clr = lr / (1 - beta1 ** float(state_steps[i]))
        param += (-clr) * exp_avg / exp_inf
