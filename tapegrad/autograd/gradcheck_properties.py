"""gradcheck's checks of reverse mode beyond matching the numbers (torch's keywords):

    (always)              backward from all-zero output gradients gives zero (or None)
                          input gradients: a backward that ignores its incoming gradient
                          fails ("backward not multiplied by grad_output", torch's check)
    check_undefined_grad  with several outputs, each output in turn gets no gradient at
                          all (its backward sees None, or zeros when it materializes
                          grads) while the others get zeros: backward must run and give
                          zeros. (torch also tries every output undefined at once; the
                          engine here never runs a backward that no gradient reached.)
    nondet_tol            backward run twice on the same grad_outputs agrees within
                          nondet_tol ("reentrant"); 0 means bit-identical
    check_batched_grad    vjps computed under vmap over a batch of grad_outputs equal
                          the same vjps computed one at a time
"""
import numpy as np

from ..core.backward import grad as _grad
from .._tensor import Tensor
from .._func.vmap import vmap
from .gradcheck_numeric import GradcheckError

__all__ = ["check_mul_by_grad_output", "check_undefined_grad", "check_reentrant",
           "check_batched_grad"]

_NOTE = ' Please look at "Notes about undefined output gradients" in PyTorch\'s ' \
        '"tools/autograd/derivatives.yaml"'


def _zeros_like(ts):
    return [Tensor._of(np.zeros_like(o._data)) for o in ts]


def check_mul_by_grad_output(live, diff_t):
    """None, or the failure message: zero grad_outputs must give zero input gradients."""
    if not live:
        return None
    gs = _grad(live, diff_t, grad_outputs=_zeros_like(live), retain_graph=True,
               allow_unused=True)
    for n, (g, x) in enumerate(zip(gs, diff_t)):
        if g is None:
            continue
        if not np.all(g._data == 0):
            return (f"backward not multiplied by grad_output (all-zero grad_outputs gave "
                    f"differentiated input {n} a gradient with max |value| "
                    f"{float(np.nanmax(np.abs(g._data))):.3e})")
        if tuple(g.shape) != tuple(x.shape):
            return f"grad is incorrect size (input {n}: {tuple(g.shape)} vs {tuple(x.shape)})"
    return None


def check_undefined_grad(live, diff_t):
    """None, or the failure message. `live`: the outputs that require grad."""
    if len(live) < 2:
        return None  # one output: the all-zero case above is all there is to check
    for k in range(len(live)):
        roots = [o for j, o in enumerate(live) if j != k]
        try:
            gs = _grad(roots, diff_t, grad_outputs=_zeros_like(roots), retain_graph=True,
                       allow_unused=True)
        except (RuntimeError, TypeError, ValueError, AttributeError) as e:
            raise GradcheckError("Expected backward function to handle undefined output grads."
                                 + _NOTE + f" (with no gradient for output {k}, backward "
                                 f"raised {type(e).__name__}: {e})") from e
        for n, g in enumerate(gs):
            if g is not None and not np.all(g._data == 0):
                return ("Expected all input grads to be undefined or zero when all output "
                        "grads are undefined or zero." + _NOTE + f" (with no gradient for "
                        f"output {k} and zeros for the others, differentiated input {n} got "
                        f"max |value| {float(np.nanmax(np.abs(g._data))):.3e})")
    return None


def check_reentrant(first, second, nondet_tol):
    """None, or the failure message, for two analytical Jacobians of the same point."""
    worst = 0.0
    for key, a in first.items():
        d = np.abs(a - second[key])
        if d.size:
            worst = max(worst, float(np.nanmax(d)) if not np.isnan(d).all() else np.inf)
    if worst <= nondet_tol:
        return None
    return ("Backward is not reentrant, i.e., running backward with same input and "
            "grad_output multiple times gives different values, although analytical "
            "gradient matches numerical gradient. The tolerance for nondeterminism was "
            f"{nondet_tol}. (max difference between two runs: {worst:.3e})")


def check_batched_grad(live, diff_t, batch=2):
    """None, or the failure message: vmap over backward vs a loop over backward."""
    if not live:
        return None
    rng = np.random.default_rng(2)
    us = [[Tensor._of(rng.standard_normal(o._data.shape).astype(o._data.dtype)) for o in live]
          for _ in range(batch)]

    def vjp(*u):
        gs = _grad(live, diff_t, grad_outputs=list(u), retain_graph=True, allow_unused=True)
        return tuple(Tensor._of(np.zeros_like(x._data)) if g is None else g
                     for x, g in zip(diff_t, gs))

    expected = [vjp(*u) for u in us]
    stacked = [Tensor._of(np.stack([u[k]._data for u in us])) for k in range(len(live))]
    try:
        got = vmap(vjp)(*stacked)
    except (RuntimeError, ValueError, TypeError) as e:
        raise GradcheckError(f"While computing batched gradients, got: "
                             f"{type(e).__name__}: {e}") from e
    for n, g in enumerate(got):
        for b in range(batch):
            if not np.allclose(g._data[b], expected[b][n]._data, rtol=1e-5, atol=1e-8):
                return (f"batched gradient mismatch for differentiated input {n}, batch "
                        f"element {b}: max abs difference "
                        f"{float(np.max(np.abs(g._data[b] - expected[b][n]._data))):.3e}")
    return None
