"""Adadelta (Zeiler 2012): per-coordinate steps from running averages of squared
gradients and squared updates, so the units of the update match those of the parameter.

Per parameter p with gradient g (PyTorch's formulation; lr scales the final update and
is 1.0 by default, as in the paper):

    g <- -g                                   if maximize
    g <- g + wd * p                           weight decay (L2 in the gradient)
    v <- rho * v + (1 - rho) * g * g          square_avg
    delta = sqrt(u + eps) / sqrt(v + eps) * g
    u <- rho * u + (1 - rho) * delta * delta  acc_delta
    p <- p - lr * delta
"""
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _no_grad_step

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure=None):
        """One update of every parameter that has a gradient. Returns closure() if given."""
        return self._step(closure)

    def _init_state(self, p, group):
        return {"step": self._new_step(), "square_avg": Tensor._of(np.zeros_like(p._data)),
                "acc_delta": Tensor._of(np.zeros_like(p._data))}

    def _update(self, group, params, states):
        adadelta([p._data for p in params], [p.grad._data for p in params],
                 [s["square_avg"]._data for s in states],
                 [s["acc_delta"]._data for s in states], [s["step"]._data for s in states],
                 lr=group["lr"], rho=group["rho"], eps=group["eps"],
                 weight_decay=group["weight_decay"], maximize=group["maximize"])


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho, eps,
             weight_decay, maximize):
    """The Adadelta math on arrays; everything is updated in place."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        square_avg, acc_delta = square_avgs[i], acc_deltas[i]
        state_steps[i] += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        square_avg *= rho
        square_avg += (1 - rho) * grad * grad
        std = np.sqrt(square_avg + eps)
        delta = np.sqrt(acc_delta + eps)
        delta /= std
        delta *= grad
        acc_delta *= rho
        acc_delta += (1 - rho) * delta * delta
        param += (-lr) * delta
