"""float16 computed in float32 and rounded once: PyTorch's "opmath" type.

PyTorch computes a float16 op in float32 (its `opmath_type<Half>` is float) and
rounds the result to float16 once: sums and norms accumulate in float32 (the norm of
[300, 400] is 500, not inf: 300**2 + 400**2 overflows float16), matmuls accumulate in
float32, and pointwise ops with intermediate steps (addcmul, lerp, gelu, softplus, the
normalizations) round only their result. NumPy computes float16 in float16, so the
recording of every op (core/record.py `apply`) and the rules of every node
(core/engine.py `_input_grads`) go through here when their first tensor is float16:
the float16 arrays are widened to float32, the op runs, its float32 result is rounded
back to float16. float32 and float64 never reach this module.

Ops that do not compute (views, reshapes, indexing: `promote=False` in their entry)
are left alone: widening would copy them, and a view must stay a view. An op declared
`promote=False` that does compute (cumsum, the average poolings) declares `opmath=True`.
"""
import numpy as np

_ndarray = np.ndarray
_float16 = np.dtype("float16")
_float32 = np.dtype("float32")


def applies(op, arrays, args):
    """Should `op` on these arrays run in float32? Only when every floating array is
    float16 (a float32 or float64 array makes NumPy compute in that dtype already, and
    the result is not float16) and no `dtype=` argument names the result's dtype."""
    if not op.opmath or args.get("dtype") is not None:
        return False
    half = False
    for a in arrays:
        if type(a) is _ndarray and a.dtype.kind == "f":
            if a.dtype != _float16:
                return False
            half = True
    return half


def widen(arrays):
    """The arrays, float16 ones as float32 (everything else as it is)."""
    return [a.astype(_float32) if type(a) is _ndarray and a.dtype == _float16 else a
            for a in arrays]


def widen_dict(d):
    return {k: (v.astype(_float32) if type(v) is _ndarray and v.dtype == _float16 else v)
            for k, v in d.items()}


def widen_rule(g, ans, kw, arrays):
    """What a node's rules read, float16 arrays widened (a multi-output `ans` stays)."""
    w = widen((g, ans))
    return w[0], w[1], widen_dict(kw), widen(arrays)


def narrow(out):
    """An op's float32 result rounded to float16 once (other dtypes, such as the int64
    indices of argmax or the bool of a comparison, as they are)."""
    if isinstance(out, (_ndarray, np.float32)) and out.dtype == _float32:
        with np.errstate(over="ignore"):  # beyond 65504: inf, silently as torch
            return np.asarray(out).astype(_float16)  # (a full reduction: a NumPy scalar)
    if type(out) is tuple:
        return tuple(narrow(o) for o in out)
    return out
