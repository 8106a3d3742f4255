"""RMSprop (Hinton's lecture 6e), with momentum and the centered variant.

Per parameter p with gradient g (PyTorch's formulation):

    g <- -g                                   if maximize
    g <- g + wd * p                           weight decay (L2 in the gradient)
    v <- alpha * v + (1 - alpha) * g * g      running mean of squares
    centered: m <- m + (1 - alpha) * (g - m);  d = sqrt(v - m*m) + eps
    else:     d = sqrt(v) + eps
    momentum > 0:  b <- momentum * b + g / d;  p <- p - lr * b
    else:          p <- p - lr * g / d
"""
import numpy as np

from .._tensor import Tensor
from ._arrays import lerp_
from .optimizer import Optimizer, _no_grad_step

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure=None):
        """One update of every parameter that has a gradient. Returns closure() if given."""
        return self._step(closure)

    def _init_state(self, p, group):
        st = {"step": self._new_step(), "square_avg": Tensor._of(np.zeros_like(p._data))}
        if group["momentum"] > 0:
            st["momentum_buffer"] = Tensor._of(np.zeros_like(p._data))
        if group["centered"]:
            st["grad_avg"] = Tensor._of(np.zeros_like(p._data))
        return st

    def _update(self, group, params, states):
        rmsprop([p._data for p in params], [p.grad._data for p in params],
                [s["square_avg"]._data for s in states],
                [s["grad_avg"]._data for s in states] if group["centered"] else [],
                [s["momentum_buffer"]._data for s in states] if group["momentum"] > 0
                else [],
                [s["step"]._data for s in states],
                lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                weight_decay=group["weight_decay"], momentum=group["momentum"],
                centered=group["centered"], maximize=group["maximize"])


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *, lr,
            alpha, eps, weight_decay, momentum, centered, maximize):
    """The RMSprop math on arrays; everything is updated in place."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        square_avg = square_avgs[i]
        state_steps[i] += 1
        if weight_decay != 0:
            grad = grad + weight_decay * param
        square_avg *= alpha
        square_avg += (1 - alpha) * grad * grad
        if centered:
            grad_avg = lerp_(grad_avgs[i], grad, 1 - alpha)
            avg = np.sqrt(square_avg - grad_avg * grad_avg)
        else:
            avg = np.sqrt(square_avg)
        avg += eps
        if momentum > 0:
            buf = momentum_buffer_list[i]
            buf *= momentum
            buf += grad / avg
            param -= lr * buf
        else:
            param += (-lr) * grad / avg
