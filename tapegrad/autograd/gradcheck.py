"""gradcheck / gradgradcheck: compare reverse (and forward) mode with central differences.

For a function `fn(*inputs) -> output(s)` and each input x_i that requires grad:

    analytical  J[o, i][k, j] = d out_o[k] / d x_i[j]   reverse mode: one VJP per output
                                                         element k (grad_outputs = e_k);
                                                         forward mode: one JVP per input
                                                         element j (tangent = e_j)
    numerical   J[o, i][:, j] ~ (fn(x + eps e_j) - fn(x - eps e_j)) / (2 eps)

both in float64 (tapegrad/autograd/gradcheck_numeric.py). For every (output, input)
pair that fails, the report gives the max absolute and relative error and the worst
element (the index in the output and the index in the input).

torch's keywords, all keyword-only as in torch:
    check_backward_ad=True    the reverse-mode Jacobian (above)
    check_forward_ad=False    the forward-mode Jacobian, with dual numbers
                              (gradcheck_forward.py); works without any backward rule
    check_undefined_grad=True, nondet_tol=0.0, check_batched_grad=False
                              properties of backward (gradcheck_properties.py), after
                              the always-on one: zero grad_outputs give zero gradients
    check_batched_forward_grad=False   tangents under vmap (gradcheck_forward.py)
    check_grad_dtypes=False   gradients/tangents must have their input's dtype (the
                              engine casts both to it, so this fires only for a rule that
                              bypasses the engine)
    fast_mode=False           one random projection u^T J v instead of the whole
                              Jacobian: J v by a central difference along a random v,
                              u^T J by one VJP (and u^T (J v) by one JVP in forward mode)
    masked=None               accepted; it concerns sparse tensors, which tapegrad lacks
    raise_exception=True      False: return False in silence, as torch does (the report
                              is only in the exception)

`gradgradcheck` checks the second derivative: it builds
    g(x, v) = VJP(fn, x, v) = autograd.grad(fn(x), x, v, create_graph=True)
and runs gradcheck on g with respect to both x and v (check_rev_over_rev: reverse mode
over it, check_fwd_over_rev: forward mode over it).
"""
import numpy as np

from .. import dtypes as _dt
from ..core import grad_mode
from ..core.backward import grad as _grad
from .._tensor import Tensor
from . import gradcheck_forward as _fwd
from . import gradcheck_properties as _props
from .gradcheck_numeric import (GradcheckError, as_tuple, compare, evaluate, fail, numerical,
                                outputs, verdict)

__all__ = ["gradcheck", "gradgradcheck", "GradcheckError"]


def _diff_inputs(inputs):
    """Indices of the inputs gradcheck differentiates; validates their dtype."""
    idx = []
    for i, t in enumerate(inputs):
        if isinstance(t, Tensor) and t.requires_grad:
            if t._data.dtype != np.float64:
                raise ValueError(
                    f"gradcheck: input {i} has dtype {_dt.name(t._data.dtype)}; finite "
                    f"differences need "
                    f"float64 inputs (use x.double() or dtype=tg.float64), otherwise the "
                    f"rounding error of the difference quotient swamps the comparison")
            idx.append(i)
    if not idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, "
                         "but none of the inputs has requires_grad=True")
    return idx


def _analytical(fn, inputs, diff_idx, check_grad_dtypes):
    """Reverse-mode Jacobians, one VJP per output element: {(k, i): (out.size, in.size)},
    and the problems seen (gradients of the wrong shape, or dtype when asked)."""
    outs = outputs(fn(*inputs))
    diff_t = [inputs[i] for i in diff_idx]
    jac = {}
    problems = []
    for k, o in outs:
        n = o._data.size
        for i in diff_idx:
            jac[k, i] = np.zeros((n, inputs[i]._data.size))
        if not o.requires_grad:
            continue  # does not depend on any input: the Jacobian is zero
        for r in range(n):
            e = np.zeros(n, dtype=o._data.dtype)
            e[r] = 1.0
            gs = _grad(o, diff_t, grad_outputs=Tensor._of(e.reshape(o.shape)), retain_graph=True,
                       allow_unused=True)
            for i, g in zip(diff_idx, gs):
                if g is None:
                    continue
                if tuple(g.shape) != tuple(inputs[i].shape):
                    problems.append(f"the gradient for input {i} has shape {tuple(g.shape)}, "
                                    f"but the input has shape {tuple(inputs[i].shape)}")
                    continue
                if check_grad_dtypes and g._data.dtype != inputs[i]._data.dtype:
                    problems.append(f"the gradient for input {i} has dtype "
                                    f"{_dt.name(g._data.dtype)}, "
                                    f"but the input has dtype {_dt.name(inputs[i]._data.dtype)}")
                jac[k, i][r, :] = np.asarray(g._data, dtype=np.float64).reshape(-1)
    return jac, sorted(set(problems))


_NO_OUTPUT = "gradcheck: the function returned no floating-point Tensor output"


def _check_flags(check_forward_ad, check_backward_ad, check_batched_grad,
                 check_batched_forward_grad):
    # the same assertions (and messages) as torch.autograd.gradcheck
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad "
                             "to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to "
                             "be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires "
                             "check_forward_ad to be True")


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True,
              nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
              check_batched_grad=False, check_batched_forward_grad=False,
              check_forward_ad=False, check_backward_ad=True, fast_mode=False, masked=None):
    """Check the gradients of `func` at `inputs` against central differences (the
    keywords are torch's; see the module docstring).

    `inputs`: a Tensor or a tuple of arguments; the float64 Tensors with
    requires_grad=True are the ones checked. Returns True, or raises `GradcheckError`
    with a per-input report (returns False, printing nothing, if `raise_exception=False`).
    """
    _check_flags(check_forward_ad, check_backward_ad, check_batched_grad,
                 check_batched_forward_grad)
    inputs = as_tuple(inputs)
    diff_idx = _diff_inputs(inputs)
    with grad_mode.enable_grad():
        outs = outputs(func(*inputs))
        if not outs:
            return fail(_NO_OUTPUT, raise_exception)
        out_shapes = {k: tuple(o.shape) for k, o in outs}
        first = None  # the reverse-mode Jacobian, when computed (for the reentrant check)
        if fast_mode:
            ok = _fast(func, inputs, diff_idx, outs, eps, atol, rtol, raise_exception,
                       check_forward_ad, check_backward_ad)
        else:
            ok, first = _slow(func, inputs, diff_idx, out_shapes, eps, atol, rtol,
                              raise_exception, check_forward_ad, check_backward_ad,
                              check_grad_dtypes)
        if not ok:
            return False
        if check_backward_ad:
            ok = _backward_properties(func, inputs, diff_idx, first, nondet_tol,
                                      check_undefined_grad, check_batched_grad,
                                      check_grad_dtypes, raise_exception)
            if not ok:
                return False
        if check_batched_forward_grad:
            msg = _fwd.check_batched(func, inputs, diff_idx)
            if msg:
                return fail("gradcheck: " + msg, raise_exception)
    return True


def _slow(fn, inputs, diff_idx, out_shapes, eps, atol, rtol, raise_exception,
          check_forward_ad, check_backward_ad, check_grad_dtypes):
    """The whole Jacobians, reverse and/or forward mode, against central differences.
    Returns (passed, the reverse-mode Jacobian or None)."""
    num = numerical(fn, inputs, diff_idx, out_shapes, eps)
    modes = []
    if check_backward_ad:
        modes.append(("reverse mode", "Jacobian",
                      _analytical(fn, inputs, diff_idx, check_grad_dtypes)))
    if check_forward_ad:
        modes.append(("forward mode", "Forward-mode Jacobian",
                      _fwd.jacobian(fn, inputs, diff_idx, out_shapes, check_grad_dtypes)))
    for mode, label, (ana, problems) in modes:
        reports = [f"gradcheck: {p}" for p in problems]
        for (k, i), n in num.items():
            rep = compare(ana[k, i], n, atol, rtol, k, i, out_shapes[k],
                          tuple(inputs[i].shape), label)
            if rep:
                reports.append(rep)
        if not verdict("gradcheck", eps, reports, raise_exception, mode):
            return False, None
    return True, (modes[0][2][0] if check_backward_ad else None)


def _backward_properties(fn, inputs, diff_idx, first, nondet_tol, check_undefined,
                         check_batched, check_grad_dtypes, raise_exception):
    """Reentrant backward, zero output grads, batched grads (gradcheck_properties.py).
    `first`: a reverse-mode Jacobian already computed, or None."""
    if first is None:
        first, _ = _analytical(fn, inputs, diff_idx, check_grad_dtypes)
    second, _ = _analytical(fn, inputs, diff_idx, check_grad_dtypes)
    diff_t = [inputs[i] for i in diff_idx]
    live = [o for _, o in outputs(fn(*inputs)) if o.requires_grad]
    checks = [lambda: _props.check_reentrant(first, second, nondet_tol),
              lambda: _props.check_mul_by_grad_output(live, diff_t)]
    if check_undefined:
        checks.append(lambda: _props.check_undefined_grad(live, diff_t))
    if check_batched:
        checks.append(lambda: _props.check_batched_grad(live, diff_t))
    for check in checks:  # in torch's order; the first failure is reported
        msg = check()
        if msg:
            return fail("gradcheck: " + msg, raise_exception)
    return True


def _fast(fn, inputs, diff_idx, outs, eps, atol, rtol, raise_exception, check_forward_ad,
          check_backward_ad):
    """Random projections: u^T J v (analytical: one VJP / one JVP per input) vs
    u^T (J v) (numerical, along v)."""
    rng = np.random.default_rng(0)
    live = [(k, o) for k, o in outs if o.requires_grad]
    us = {k: rng.standard_normal(o.shape) for k, o in outs}
    vs = {i: rng.standard_normal(inputs[i].shape) for i in diff_idx}
    num = {}
    for i in diff_idx:
        x0 = np.array(inputs[i]._data, dtype=np.float64)
        fp = evaluate(fn, inputs, {i: x0 + eps * vs[i]})
        fm = evaluate(fn, inputs, {i: x0 - eps * vs[i]})
        num[i] = sum(float(np.sum(us[k] * (fp[k] - fm[k]) / (2 * eps))) for k, _ in outs)
    modes = []
    if check_backward_ad:
        diff_t = [inputs[i] for i in diff_idx]
        ana = {i: 0.0 for i in diff_idx}
        if live:
            gs = _grad([o for _, o in live], diff_t,
                       grad_outputs=[Tensor._of(us[k].astype(o._data.dtype)) for k, o in live],
                       allow_unused=True)
            for i, g in zip(diff_idx, gs):
                if g is not None:
                    ana[i] = float(np.sum(np.asarray(g._data, dtype=np.float64) * vs[i]))
        modes.append(("reverse mode", ana))
    if check_forward_ad:
        modes.append(("forward mode", _fwd.projections(fn, inputs, diff_idx, us, vs)))
    for mode, ana in modes:
        reports = []
        for i in diff_idx:
            rep = compare(np.array([[ana[i]]]), np.array([[num[i]]]), atol, rtol, "*", i, (),
                          (), f"Projected Jacobian (u^T J v, fast mode, {mode})")
            if rep:
                reports.append(rep)
        if not verdict("gradcheck (fast mode)", eps, reports, raise_exception, mode):
            return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3,
                  gen_non_contig_grad_outputs=False, raise_exception=True, nondet_tol=0.0,
                  check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
                  check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """Check second derivatives: gradcheck of (x, v) -> VJP(fn, x, v) = v^T J(x).

    `grad_outputs`: the v's (one per floating-point output); random float64 tensors that
    require grad when None, so that the check also covers the dependence on v.
    `gen_non_contig_grad_outputs` is accepted (tapegrad arrays have no strides to vary).
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or "
                             "check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_undefined_grad=True requires check_rev_over_rev "
                             "to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError("Setting check_batched_grad=True requires check_rev_over_rev to "
                             "be True")
    inputs = as_tuple(inputs)
    diff_idx = _diff_inputs(inputs)
    with grad_mode.enable_grad():
        outs = outputs(func(*inputs))
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(Tensor._of(rng.standard_normal(o.shape), requires_grad=True)
                             for _, o in outs)
    grad_outputs = as_tuple(grad_outputs)
    if len(grad_outputs) != len(outs):
        raise ValueError(f"gradgradcheck: got {len(grad_outputs)} grad_outputs for "
                         f"{len(outs)} floating-point outputs")
    n_in = len(inputs)
    diff_v = {j for j, v in enumerate(grad_outputs) if isinstance(v, Tensor) and v.requires_grad}

    def vjp_fn(*args):
        # forward mode hands in detached dual tensors: restore requires_grad, as torch does
        xs = [x.requires_grad_() if i in diff_idx and not x.requires_grad else x
              for i, x in enumerate(args[:n_in])]
        vs = [v.requires_grad_() if j in diff_v and not v.requires_grad else v
              for j, v in enumerate(args[n_in:])]
        o = outputs(func(*xs))
        pairs = [(t, v) for (_, t), v in zip(o, vs) if t.requires_grad]
        dx = [xs[i] for i in diff_idx]
        if not pairs:
            return tuple()
        gs = _grad([t for t, _ in pairs], dx, grad_outputs=[v for _, v in pairs],
                   create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(vjp_fn, inputs + grad_outputs, eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev,
                     fast_mode=fast_mode, masked=masked)
