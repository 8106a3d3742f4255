"""Adagrad (Duchi et al. 2011): each coordinate's step shrinks with the sum of its past
squared gradients.

Per parameter p with gradient g, step t = 1, 2, ... (PyTorch's formulation):

    g <- -g                                   if maximize
    g <- g + wd * p                           weight decay (L2 in the gradient)
    clr = lr / (1 + (t - 1) * lr_decay)
    s <- s + g * g                            state 'sum', starts at initial_accumulator_value
    p <- p - clr * g / (sqrt(s) + eps)

As in PyTorch, the state is created in the constructor (so `state_dict()` has it before
the first step), and lazily for parameter groups added later.
"""
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _no_grad_step

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError("Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if fused and differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if fused and foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        for group in self.param_groups:
            self._group_states(group, group["params"])

    @_no_grad_step
    def step(self, closure=None):
        """One update of every parameter that has a gradient. Returns closure() if given."""
        return self._step(closure)

    def _init_state(self, p, group):
        # torch takes the accumulator's start from the constructor's defaults, not the group
        return {"step": self._new_step(fused=bool(group["fused"])),
                "sum": Tensor._of(
                    np.full_like(p._data, self.defaults["initial_accumulator_value"]))}

    def _update(self, group, params, states):
        adagrad([p._data for p in params], [p.grad._data for p in params],
                [s["sum"]._data for s in states], [s["step"]._data for s in states],
                lr=group["lr"], weight_decay=group["weight_decay"],
                lr_decay=group["lr_decay"], eps=group["eps"], maximize=group["maximize"])


def adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps,
            maximize):
    """The Adagrad math on arrays; everything is updated in place."""
    for i, param in enumerate(params):
        state_steps[i] += 1
        step = float(state_steps[i])
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            grad = grad + weight_decay * param
        clr = lr / (1 + (step - 1) * lr_decay)
        state_sums[i] += grad * grad
        std = np.sqrt(state_sums[i])
        std += eps
        param += (-clr) * grad / std
