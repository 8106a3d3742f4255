"""SGD with momentum, dampening, Nesterov, weight decay and maximize.

The update, per parameter p with gradient g (PyTorch's formulation):

    g <- -g                         if maximize
    g <- g + weight_decay * p       (L2 penalty folded into the gradient)
    b <- g                          first step: the buffer starts AT the gradient
    b <- momentum * b + (1 - dampening) * g      later steps
    g <- g + momentum * b  if nesterov  else  b
    p <- p - lr * g

(Sutskever et al. put lr inside the buffer; PyTorch, and so tapegrad, do not.)
Each "x + c * y" is one fused multiply-add, as PyTorch's `add_(y, alpha=c)` that its
SGD calls (`_arrays.add_scaled_`, BLAS axpy): torch's bits, but for a short tail that
some OpenBLAS kernels (Haswell's) round twice.
"""
import numpy as np

from .._tensor import Tensor
from ._arrays import add_scaled_
from .optimizer import Optimizer, _no_grad_step, required

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if lr is not required and lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)

    @_no_grad_step
    def step(self, closure=None):
        """One update of every parameter that has a gradient. Returns closure() if given."""
        return self._step(closure)

    def _group_states(self, group, params):
        # torch keeps SGD state only with momentum, and makes no buffer before the first
        # step: `sgd` starts it AT the gradient (so there is no `_init_state`)
        if group["momentum"] == 0:
            return [None] * len(params)
        return [self.state.get(p) for p in params]

    def _update(self, group, params, states):
        bufs = [None if st is None or st.get("momentum_buffer") is None
                else st["momentum_buffer"]._data for st in states]
        sgd([p._data for p in params], [p.grad._data for p in params], bufs,
            weight_decay=group["weight_decay"], momentum=group["momentum"],
            lr=group["lr"], dampening=group["dampening"], nesterov=group["nesterov"],
            maximize=group["maximize"])
        if group["momentum"] != 0:
            for p, st, b in zip(params, states, bufs):
                if st is None:
                    st = self.state[p] = {}
                old = st.get("momentum_buffer")
                if old is None or old._data is not b:
                    st["momentum_buffer"] = Tensor._of(b)

    def _update_fast(self, gi, group, params):
        """Plain SGD (the common case): `sgd`'s update p <- p - lr * g, the same
        arithmetic, in one loop (no per-step lists)."""
        if group["momentum"] != 0 or group["weight_decay"] != 0 or group["maximize"]:
            return False
        lr = group["lr"]
        for p in params:
            add_scaled_(p._data, -lr, p.grad._data)
        return True


def sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening,
        nesterov, maximize):
    """The SGD math on arrays. `params` are updated in place; a None entry of
    `momentum_buffer_list` is replaced by the new buffer (a copy of the gradient)."""
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:  # torch: grad.add(param, alpha=weight_decay), a new array
            grad = add_scaled_(np.array(grad, copy=True), weight_decay, param)
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                # NOTE: np.array, not grad.copy(): for a 0-d parameter `grad` may be a
                # NumPy scalar, and the buffer must be a mutable array.
                buf = np.array(grad, copy=True)
                momentum_buffer_list[i] = buf
            else:  # torch: buf.mul_(momentum).add_(grad, alpha=1 - dampening)
                buf *= momentum
                add_scaled_(buf, 1 - dampening, grad)
            grad = add_scaled_(np.array(grad, copy=True), momentum, buf) if nesterov else buf
        add_scaled_(param, -lr, grad)
