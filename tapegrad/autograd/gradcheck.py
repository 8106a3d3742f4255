"""gradcheck / gradgradcheck: compare reverse mode with central finite differences.

For a function `fn(*inputs) -> output(s)` and each input x_i that requires grad:

    analytical  J[o, i][k, j] = d out_o[k] / d x_i[j]   one VJP per output element k
                                                         (grad_outputs = one-hot e_k)
    numerical   J[o, i][:, j] ~ (fn(x + eps e_j) - fn(x - eps e_j)) / (2 eps)

both in float64. An entry fails when |analytical - numerical| > atol + rtol * |numerical|
(the test of `numpy.allclose`, as PyTorch's gradcheck). For every (output, input) pair
that fails, the report gives the max absolute and relative error and the worst element
(the index in the output and the index in the input).

`fast_mode=True` compares one random projection instead of the full Jacobian:
u^T J v, with J v from a central difference along a random direction v and u^T J from
one VJP. Cheaper (two evaluations and one backward per input), less informative.

`gradgradcheck` checks the second derivative: it builds
    g(x, v) = VJP(fn, x, v) = autograd.grad(fn(x), x, v, create_graph=True)
and runs gradcheck on g with respect to both x and v.
"""
import numpy as np

from ..core import grad_mode
from ..core.backward import grad as _grad
from ..tensor import Tensor

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


class GradcheckError(RuntimeError):
    """Raised by gradcheck when the analytical and numerical Jacobians disagree."""




def _as_tuple(x):
    if isinstance(x, (tuple, list)):
        return tuple(x)
    return (x,)


def _diff_inputs(inputs):
    """Indices of the inputs gradcheck differentiates; validates their dtype."""
    idx = []
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad:
            if t.data.dtype != np.float64:
                raise ValueError(
                    f"gradcheck: input {i} has dtype {t.data.dtype}; finite differences need "
                    f"float64 inputs (use x.double() or dtype=tg.float64), otherwise the "
                    f"rounding error of the difference quotient swamps the comparison")
            idx.append(i)
    if not idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the inputs has requires_grad=True")
    return idx


def _outputs(out):
    """The function's outputs as a tuple; non-tensors and integer tensors are skipped."""
    outs = _as_tuple(out)
    res = []
    for k, o in enumerate(outs):
        if isinstance(o, Tensor):
            if o.data.dtype.kind == "f":
                res.append((k, o))
        elif o is not None and not isinstance(o, (int, float, bool, np.ndarray)):
            raise TypeError(f"gradcheck: output {k} of the function is a {type(o).__name__}; "
                            "expected Tensors")
    return res


def _fresh(inputs, arrays):
    """New leaf tensors holding `arrays` (same requires_grad as the originals)."""
    out = list(inputs)
    for i, a in arrays.items():
        out[i] = Tensor(a, requires_grad=inputs[i].requires_grad)
    return out


def _eval(fn, inputs, arrays):
    """fn on inputs with some arrays replaced; returns {output index: float64 array}."""
    # NOTE: grad mode stays on: gradgradcheck's function itself calls autograd.grad.
    outs = _outputs(fn(*_fresh(inputs, arrays)))
    return {k: np.array(o.data, dtype=np.float64) for k, o in outs}


def _numerical(fn, inputs, diff_idx, out_shapes, eps):
    """Numerical Jacobians: {(out k, input i): array (out.size, in.size)}."""
    jac = {}
    for i in diff_idx:
        x0 = np.array(inputs[i].data, dtype=np.float64)
        for k, shp in out_shapes.items():
            jac[k, i] = np.zeros((int(np.prod(shp)), x0.size))
        for j in range(x0.size):
            xp_, xm_ = x0.copy(), x0.copy()
            xp_.reshape(-1)[j] += eps
            xm_.reshape(-1)[j] -= eps
            fp = _eval(fn, inputs, {i: xp_})
            fm = _eval(fn, inputs, {i: xm_})
            for k in out_shapes:
                jac[k, i][:, j] = ((fp[k] - fm[k]) / (2 * eps)).reshape(-1)
    return jac


def _analytical(fn, inputs, diff_idx):
    """Reverse-mode Jacobians, one VJP per output element: {(k, i): (out.size, in.size)}."""
    outs = _outputs(fn(*inputs))
    out_shapes = {k: tuple(o.shape) for k, o in outs}
    diff_t = [inputs[i] for i in diff_idx]
    jac = {}
    problems = []
    for k, o in outs:
        n = o.data.size
        for i in diff_idx:
            jac[k, i] = np.zeros((n, inputs[i].data.size))
        if not o.requires_grad:
            continue  # does not depend on any input: the Jacobian is zero
        for r in range(n):
            e = np.zeros(n, dtype=o.data.dtype)
            e[r] = 1.0
            gs = _grad(o, diff_t, grad_outputs=Tensor(e.reshape(o.shape)), retain_graph=True,
                       allow_unused=True)
            for i, g in zip(diff_idx, gs):
                if g is None:
                    continue
                if tuple(g.shape) != tuple(inputs[i].shape):
                    problems.append(f"the gradient for input {i} has shape {tuple(g.shape)}, "
                                    f"but the input has shape {tuple(inputs[i].shape)}")
                    continue
                if g.data.dtype != inputs[i].data.dtype:
                    problems.append(f"the gradient for input {i} has dtype {g.data.dtype}, "
                                    f"but the input has dtype {inputs[i].data.dtype}")
                jac[k, i][r, :] = np.asarray(g.data, dtype=np.float64).reshape(-1)
    return jac, out_shapes, problems


def _unravel(j, shape):
    return tuple(int(v) for v in np.unravel_index(j, shape)) if shape else ()


def _compare(a, n, atol, rtol, k, i, out_shape, in_shape, label):
    """Return a report paragraph if a and n disagree, else None."""
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


def _fail(msg, raise_exception):
    if raise_exception:
        raise GradcheckError(msg)
    print(msg)
    return False


_NO_OUTPUT = "gradcheck: the function returned no floating-point Tensor output"


def _verdict(what, eps, reports, raise_exception):
    """True when there is no report; otherwise fail (raise or print) with a header naming
    the check (`what`) and eps, followed by the reports."""
    if not reports:
        return True
    return _fail(f"{what} failed: reverse mode disagrees with central differences "
                 f"(eps={eps:g}).\n" + "\n".join(reports), raise_exception)


def gradcheck(fn, inputs, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              fast_mode=False, *, nondet_tol=0.0):
    """Check reverse-mode gradients of `fn` at `inputs` against central differences.

    `inputs`: a Tensor or a tuple of arguments; the float64 Tensors with
    requires_grad=True are the ones checked. Returns True, or raises `GradcheckError`
    with a per-input report (prints it and returns False if `raise_exception=False`).
    """
    inputs = _as_tuple(inputs)
    diff_idx = _diff_inputs(inputs)
    with grad_mode.enable_grad():
        if fast_mode:
            return _fast(fn, inputs, diff_idx, eps, atol, rtol, raise_exception)
        ana, out_shapes, problems = _analytical(fn, inputs, diff_idx)
        if not out_shapes:
            return _fail(_NO_OUTPUT, raise_exception)
        num = _numerical(fn, inputs, diff_idx, out_shapes, eps)
    reports = [f"gradcheck: {p}" for p in problems]
    for (k, i), n in num.items():
        rep = _compare(ana[k, i], n, atol, rtol, k, i, out_shapes[k], tuple(inputs[i].shape),
                       "Jacobian")
        if rep:
            reports.append(rep)
    return _verdict("gradcheck", eps, reports, raise_exception)


def _fast(fn, inputs, diff_idx, eps, atol, rtol, raise_exception):
    """Random projections: u^T J v (analytical, one VJP) vs u^T (J v) (numerical)."""
    rng = np.random.default_rng(0)
    outs = _outputs(fn(*inputs))
    if not outs:
        return _fail(_NO_OUTPUT, raise_exception)
    live = [(k, o) for k, o in outs if o.requires_grad]
    us = {k: rng.standard_normal(o.shape) for k, o in outs}
    diff_t = [inputs[i] for i in diff_idx]
    ana = {i: 0.0 for i in diff_idx}
    if live:
        gs = _grad([o for _, o in live], diff_t,
                   grad_outputs=[Tensor(us[k].astype(o.data.dtype)) for k, o in live],
                   allow_unused=True)
    else:
        gs = [None] * len(diff_idx)
    vs = {}
    for i, g in zip(diff_idx, gs):
        vs[i] = rng.standard_normal(inputs[i].shape)
        if g is not None:
            ana[i] = float(np.sum(np.asarray(g.data, dtype=np.float64) * vs[i]))
    reports = []
    for i in diff_idx:
        x0 = np.array(inputs[i].data, dtype=np.float64)
        fp = _eval(fn, inputs, {i: x0 + eps * vs[i]})
        fm = _eval(fn, inputs, {i: x0 - eps * vs[i]})
        num = sum(float(np.sum(us[k] * (fp[k] - fm[k]) / (2 * eps))) for k, _ in outs)
        rep = _compare(np.array([[ana[i]]]), np.array([[num]]), atol, rtol, "*", i, (), (),
                       "Projected Jacobian (u^T J v, fast mode)")
        if rep:
            reports.append(rep)
    return _verdict("gradcheck (fast mode)", eps, reports, raise_exception)


def gradgradcheck(fn, inputs, grad_outputs=None, eps=1e-6, atol=1e-5, rtol=1e-3,
                  raise_exception=True, fast_mode=False, *, nondet_tol=0.0):
    """Check second derivatives: gradcheck of (x, v) -> VJP(fn, x, v) = v^T J(x).

    `grad_outputs`: the v's (one per floating-point output); random float64 tensors that
    require grad when None, so that the check also covers the dependence on v.
    """
    inputs = _as_tuple(inputs)
    diff_idx = _diff_inputs(inputs)
    with grad_mode.enable_grad():
        outs = _outputs(fn(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(Tensor(rng.standard_normal(o.shape), requires_grad=True)
                             for _, o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    if len(grad_outputs) != len(outs):
        raise ValueError(f"gradgradcheck: got {len(grad_outputs)} grad_outputs for "
                         f"{len(outs)} floating-point outputs")
    n_in = len(inputs)

    def vjp_fn(*args):
        xs, vs = args[:n_in], args[n_in:]
        o = _outputs(fn(*xs))
        pairs = [(t, v) for (_, t), v in zip(o, vs) if t.requires_grad]
        dx = [xs[i] for i in diff_idx]
        if not pairs:
            return tuple()
        gs = _grad([t for t, _ in pairs], dx, grad_outputs=[v for _, v in pairs],
                   create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp_fn, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, fast_mode=fast_mode)
