"""gradcheck's forward-mode checks (`check_forward_ad=True`, `check_batched_forward_grad`).

The Jacobian column for input element (i, j) is the output tangents of one forward pass
with dual numbers (`autograd.forward_ad`) in which input i carries the tangent e_j and
the other differentiated inputs a zero tangent; the columns are compared with the same
central differences as reverse mode. The inputs are detached first, so a function with
only a forward rule (a custom Function with `jvp` and no `backward`) is checked without
ever running backward (check_backward_ad=False).

Fast mode compares u^T (J v) for one random v per input. The batched check runs the
tangent computation under `vmap` over a batch of tangents and compares each slice with
the same tangent computed alone.
"""
import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor
from .._func.vmap import vmap
from . import forward_ad as fwAD
from .gradcheck_numeric import GradcheckError, outputs

__all__ = ["jacobian", "projections", "check_batched"]


def _base(inputs):
    return [x.detach() if isinstance(x, Tensor) else x for x in inputs]


def _tangents_out(fn, base, diff_idx, tangents):
    """{output k: tangent Tensor (zeros when the output carries none)} for one forward
    pass in which input m carries tangents[m] (a Tensor) for m in diff_idx."""
    with fwAD.dual_level():
        args = list(base)
        for m in diff_idx:
            args[m] = fwAD.make_dual(base[m], tangents[m])
        res = {}
        for k, o in outputs(fn(*args)):
            t = fwAD.unpack_dual(o).tangent
            res[k] = t if t is not None else Tensor._of(np.zeros_like(o._data))
        return res


def jacobian(fn, inputs, diff_idx, out_shapes, check_grad_dtypes):
    """Forward-mode Jacobians {(k, i): (out.size, in.size)} and a list of problems
    (tangents of the wrong shape or, with check_grad_dtypes, dtype)."""
    base = _base(inputs)
    zeros = {m: Tensor._of(np.zeros_like(base[m]._data)) for m in diff_idx}
    jac, problems = {}, []
    for i in diff_idx:
        n = base[i]._data.size
        for k, shp in out_shapes.items():
            jac[k, i] = np.zeros((int(np.prod(shp)), n))
        for j in range(n):
            e = np.zeros(n, dtype=base[i]._data.dtype)
            e[j] = 1
            tangents = dict(zeros)
            tangents[i] = Tensor._of(e.reshape(base[i]._data.shape))
            for k, t in _tangents_out(fn, base, diff_idx, tangents).items():
                if k not in out_shapes:
                    continue
                if tuple(t.shape) != out_shapes[k]:
                    problems.append(f"the forward gradient of output {k} has shape "
                                    f"{tuple(t.shape)}, but the output has shape "
                                    f"{out_shapes[k]}")
                    continue
                if check_grad_dtypes and t._data.dtype != base[i]._data.dtype:
                    problems.append(f"the forward gradient of output {k} has dtype "
                                    f"{_dt.name(t._data.dtype)}, but input {i} has dtype "
                                    f"{_dt.name(base[i]._data.dtype)}")
                jac[k, i][:, j] = np.asarray(t._data, dtype=np.float64).reshape(-1)
    return jac, sorted(set(problems))


def projections(fn, inputs, diff_idx, us, vs):
    """{input i: u^T J_i v_i} by forward mode, one pass per input (input i carries v_i,
    the others zero tangents); us[k] weights output k."""
    base = _base(inputs)
    res = {}
    for i in diff_idx:
        tangents = {m: Tensor._of(vs[i].astype(base[m]._data.dtype) if m == i
                              else np.zeros_like(base[m]._data)) for m in diff_idx}
        tans = _tangents_out(fn, base, diff_idx, tangents)
        res[i] = sum(float(np.sum(us[k] * np.asarray(t._data, dtype=np.float64)))
                     for k, t in tans.items() if k in us)
    return res


def check_batched(fn, inputs, diff_idx, batch=2):
    """None, or a report when the tangents computed under vmap (a batch of random
    tangents for one input at a time) differ from the same tangents computed alone."""
    base = _base(inputs)
    rng = np.random.default_rng(1)
    for i in diff_idx:
        zeros = {m: Tensor._of(np.zeros_like(base[m]._data)) for m in diff_idx}
        ts = [Tensor._of(rng.standard_normal(base[i]._data.shape).astype(base[i]._data.dtype))
              for _ in range(batch)]

        def along(t):
            tangents = dict(zeros)
            tangents[i] = t
            tans = _tangents_out(fn, base, diff_idx, tangents)
            return tuple(tans[k] for k in sorted(tans))

        expected = [along(t) for t in ts]
        try:
            got = vmap(along)(Tensor._of(np.stack([t._data for t in ts])))
        except (RuntimeError, ValueError, TypeError) as e:
            raise GradcheckError(f"While computing batched gradients (forward mode), got: "
                                 f"{type(e).__name__}: {e}") from e
        for pos, g in enumerate(got):
            for b in range(batch):
                if not np.allclose(g._data[b], expected[b][pos]._data, rtol=1e-5, atol=1e-8):
                    return (f"batched forward gradient mismatch for output {pos} along input "
                            f"{i}, batch element {b}: max abs difference "
                            f"{float(np.max(np.abs(g._data[b] - expected[b][pos]._data))):.3e}")
    return None
