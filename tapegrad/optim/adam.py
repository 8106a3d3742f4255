"""Adam (with amsgrad) and AdamW (decoupled weight decay).

Per parameter p, gradient g, step t = 1, 2, ... (PyTorch's formulation):

    g <- -g                                   if maximize
    p <- p * (1 - lr * wd)                    AdamW (decoupled weight decay)
    g <- g + wd * p                           Adam with weight_decay (L2 in the gradient)
    m <- m + (1 - beta1) * (g - m)            first moment  (lerp)
    v <- beta2 * v + (1 - beta2) * g * g      second moment
    vmax <- max(vmax, v); use vmax for v      if amsgrad
    p <- p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)

`adam` is that math per parameter (the reference). With `foreach` None (the default) or
True, a group whose state is a `FlatPack` (_flat.py) is updated by `adam_flat`: the same
operations in the same order on whole buffers, so the same bits, several times faster
for many small parameters. `foreach=False` always takes the per-parameter loop. `fused`
is accepted for torch's signature; it selects nothing more.
"""
import numpy as np

from .._tensor import Tensor
from ._arrays import adam_moments_, lerp_
from ._flat import FlatPack
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
        return self._step(closure)

    def _init_state(self, p, group):
        st = {"step": self._new_step(fused=bool(group["fused"])),
              "exp_avg": Tensor._of(np.zeros_like(p._data)),
              "exp_avg_sq": Tensor._of(np.zeros_like(p._data))}
        if group["amsgrad"]:
            st["max_exp_avg_sq"] = Tensor._of(np.zeros_like(p._data))
        return st

    def _update(self, group, params, states):
        beta1, beta2 = group["betas"]
        adam([p._data for p in params], [p.grad._data for p in params],
             [s["exp_avg"]._data for s in states], [s["exp_avg_sq"]._data for s in states],
             [s["max_exp_avg_sq"]._data for s in states] if group["amsgrad"] else [],
             [s["step"]._data for s in states],
             amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
             weight_decay=group["weight_decay"], eps=group["eps"],
             maximize=group["maximize"],
             decoupled_weight_decay=group.get("decoupled_weight_decay", False))

    def _update_fast(self, gi, group, params):
        """The group's FlatPack update (`foreach` not False and the pack fits)."""
        pack = self._pack(gi, group, params) if group.get("foreach") is not False else None
        if pack is None:
            return False
        beta1, beta2 = group["betas"]
        adam_flat(pack, [p._data for p in params], [p.grad._data for p in params],
                  amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2,
                  lr=group["lr"], weight_decay=group["weight_decay"],
                  eps=group["eps"], maximize=group["maximize"],
                  decoupled_weight_decay=group.get("decoupled_weight_decay", False))
        return True

    def _names(self, group):
        return ("step", "exp_avg", "exp_avg_sq") + (
            ("max_exp_avg_sq",) if group["amsgrad"] else ())

    def _pack(self, gi, group, params):
        """Group gi's FlatPack when this step can use it (made for fresh state), else None."""
        packs = self.__dict__.setdefault("_packs", {})
        pack = packs.get(gi)
        if (pack is not None and pack.holds(params, self.state)
                and len(pack.views) == len(self._names(group))):  # amsgrad unchanged
            steps = pack.flat["step"]
            # one bias correction for the whole buffer: every parameter at the same step
            return pack if steps.min() == steps.max() else None
        if not FlatPack.fits(params) or any(self.state.get(p) for p in params):
            return None
        step_dtype = self._new_step(bool(group["fused"]))._data.dtype
        pack = packs[gi] = FlatPack(params, self._names(group), params[0]._data.dtype,
                                    step_dtype)
        pack.install(self.state)
        return pack

    def load_state_dict(self, state_dict):
        super().load_state_dict(state_dict)
        # the loaded buffers are fresh copies: move them into flat packs at once
        packs = self.__dict__["_packs"] = {}
        for gi, group in enumerate(self.param_groups):
            params = group["params"]
            names = self._names(group)
            if (group.get("foreach") is False or not FlatPack.fits(params)
                    or not all(set(names) <= set(self.state.get(p, ())) for p in params)):
                continue
            # a loaded `step` keeps its dtype (torch casts only capturable/fused ones)
            step_dtypes = {np.asarray(self.state[p]["step"]._data).dtype for p in params}
            if len(step_dtypes) != 1:
                continue
            pack = packs[gi] = FlatPack(params, names, params[0]._data.dtype,
                                        step_dtypes.pop())
            pack.install(self.state, copy_from_state=True)


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
    0-d arrays of torch's scalar dtype, incremented here)."""
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


def adam_flat(pack, params, grads, *, amsgrad, beta1, beta2, lr, weight_decay, eps, maximize,
              decoupled_weight_decay=False):
    """`adam` on a FlatPack's whole buffers: the reference's operations, in its order
    (so the same bits), into the pack's scratch arrays (no fresh temporaries)."""
    g, tmp, upd = pack.grad, pack.tmp, pack.upd
    m, v = pack.flat["exp_avg"], pack.flat["exp_avg_sq"]
    steps = pack.flat["step"]
    np.concatenate(grads, axis=None, out=g)
    if maximize:
        np.negative(g, out=g)
    steps += 1
    if weight_decay != 0:
        if decoupled_weight_decay:
            for p in params:
                p *= 1 - lr * weight_decay
        else:  # g <- g + wd * p
            np.concatenate(params, axis=None, out=tmp)
            tmp *= weight_decay
            g += tmp
    step = float(steps[0])
    step_size = lr / (1 - beta1 ** step)
    bias_correction2_sqrt = (1 - beta2 ** step) ** 0.5
    w = 1 - beta1  # lerp_(m, g, w), its two branches
    if abs(w) < 0.5 and not amsgrad:  # the common path, fused (the same bits)
        adam_moments_(g, m, v, tmp, upd, beta1, beta2, step_size, bias_correction2_sqrt, eps)
    else:
        np.subtract(g, m, out=tmp)
        if abs(w) < 0.5:
            tmp *= w
            m += tmp
        else:
            tmp *= 1 - w
            np.subtract(g, tmp, out=m)
        v *= beta2
        np.multiply(g, 1 - beta2, out=tmp)  # (1 - beta2) * g * g, left to right
        tmp *= g
        v += tmp
        if amsgrad:
            vmax = pack.flat["max_exp_avg_sq"]
            np.maximum(vmax, v, out=vmax)
            v = vmax
        np.sqrt(v, out=tmp)
        tmp /= bias_correction2_sqrt
        tmp += eps                                   # denom
        np.multiply(m, -step_size, out=upd)          # (-step_size) * m / denom
        upd /= tmp
    for p, u in zip(params, pack.upd_views):
        p += u
