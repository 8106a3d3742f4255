"""The common ground of gradcheck's checks: running the function, central differences,
comparing two Jacobians and reporting the worst element.

    numerical  J[o, i][:, j] ~ (fn(x + eps e_j) - fn(x - eps e_j)) / (2 eps)    float64

An entry fails when |analytical - numerical| > atol + rtol * |numerical| (the test of
`numpy.allclose`, as PyTorch's gradcheck). Jacobians are dicts {(output k, input i):
array (out.size, in.size)}.
"""
import numpy as np

from .._tensor import Tensor

__all__ = ["GradcheckError", "as_tuple", "outputs", "fresh", "evaluate", "numerical",
           "compare", "fail", "verdict"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical Jacobians disagree."""


def as_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def outputs(out):
    """The function's outputs [(index, tensor)]; non-tensors and integer tensors are
    skipped (they have no derivative)."""
    res = []
    for k, o in enumerate(as_tuple(out)):
        if isinstance(o, Tensor):
            if o._data.dtype.kind == "f":
                res.append((k, o))
        elif o is not None and not isinstance(o, (int, float, bool, np.ndarray)):
            raise TypeError(f"gradcheck: output {k} of the function is a {type(o).__name__}; "
                            "expected Tensors")
    return res


def fresh(inputs, arrays):
    """New leaf tensors holding `arrays` (same requires_grad as the originals)."""
    out = list(inputs)
    for i, a in arrays.items():
        out[i] = Tensor._of(a, requires_grad=inputs[i].requires_grad)
    return out


def evaluate(fn, inputs, arrays):
    """fn on inputs with some arrays replaced; returns {output index: float64 array}."""
    # NOTE: grad mode stays on: gradgradcheck's function itself calls autograd.grad.
    outs = outputs(fn(*fresh(inputs, arrays)))
    return {k: np.array(o._data, dtype=np.float64) for k, o in outs}


def numerical(fn, inputs, diff_idx, out_shapes, eps):
    """Numerical Jacobians: {(out k, input i): array (out.size, in.size)}."""
    jac = {}
    for i in diff_idx:
        x0 = np.array(inputs[i]._data, dtype=np.float64)
        for k, shp in out_shapes.items():
            jac[k, i] = np.zeros((int(np.prod(shp)), x0.size))
        for j in range(x0.size):
            xp_, xm_ = x0.copy(), x0.copy()
            xp_.reshape(-1)[j] += eps
            xm_.reshape(-1)[j] -= eps
            fp = evaluate(fn, inputs, {i: xp_})
            fm = evaluate(fn, inputs, {i: xm_})
            for k in out_shapes:
                jac[k, i][:, j] = ((fp[k] - fm[k]) / (2 * eps)).reshape(-1)
    return jac


def _unravel(j, shape):
    return tuple(int(v) for v in np.unravel_index(j, shape)) if shape else ()


def compare(a, n, atol, rtol, k, i, out_shape, in_shape, label):
    """A report paragraph if a (analytical) and n (numerical) disagree, else None."""
    diff = np.abs(a - n)
    bad = ~(diff <= atol + rtol * np.abs(n))  # NaN counts as a failure
    if not bad.any():
        return None
    with np.errstate(divide="ignore", invalid="ignore"):
        rel = np.where(diff == 0, 0.0, diff / np.abs(n))
    excess = np.where(np.isnan(diff), np.inf, diff - (atol + rtol * np.abs(n)))
    worst = np.unravel_index(int(np.argmax(excess)), a.shape)
    r, c = int(worst[0]), int(worst[1])
    oi, ii = _unravel(r, out_shape), _unravel(c, in_shape)
    return (f"{label} mismatch for output {k} with respect to input {i} "
            f"(output shape {out_shape}, input shape {in_shape}):\n"
            f"  max abs error {np.nanmax(diff) if not np.isnan(diff).all() else np.nan:.3e}, "
            f"max rel error {np.nanmax(rel) if not np.isnan(rel).all() else np.nan:.3e}, "
            f"{int(bad.sum())} of {bad.size} entries outside atol={atol:g} + rtol={rtol:g}*|numerical|\n"
            f"  worst element: d output{k}{list(oi)} / d input{i}{list(ii)}: "
            f"analytical {float(a[r, c])!r} vs numerical {float(n[r, c])!r}")


def fail(msg, raise_exception):
    """Raise `GradcheckError(msg)`, or return False in silence (torch prints nothing
    when raise_exception=False; the report is only in the exception)."""
    if raise_exception:
        raise GradcheckError(msg)
    return False


def verdict(what, eps, reports, raise_exception, mode="reverse mode"):
    """True when there is no report; otherwise fail (raise, or return False) with a header naming
    the check (`what`), the mode compared and eps, followed by the reports."""
    if not reports:
        return True
    return fail(f"{what} failed: {mode} disagrees with central differences "
                f"(eps={eps:g}).\n" + "\n".join(reports), raise_exception)
