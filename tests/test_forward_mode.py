"""Forward mode (dual numbers, JVP rules) vs PyTorch's forward AD and torch.func.

Also the mode identity <u, J v> = <J^T u, v> between every table op's forward (JVP)
and reverse (VJP) rules, on the ops the corpus reaches.
"""
import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as tfwAD

import tapegrad as tg
from tapegrad.autograd import forward_ad as fwAD
from tapegrad.core.engine import sum_to
from tapegrad.core.record import apply
from tapegrad.core.state import state
from tapegrad.ops.registry import OPS

from _ad_corpus import CORPUS, opdb_calls, sample
from _helpers import assert_close

RTOL, ATOL = 1e-10, 1e-12


def _inputs(name, shapes, domain, seed=0):
    rng = np.random.default_rng(abs(hash(name)) % 2 ** 32 + seed)
    return [sample(rng, s, domain) for s in shapes]


def _close(a, b, rtol=RTOL, atol=ATOL):
    assert_close(a, b, rtol=rtol, atol=atol)


# ---- worked example 3 -----------------------------------------------------------------
def _logistic(x):
    for _ in range(6):
        x = 4 * x * (1 - x)
    return x


def test_worked_example_3_forward_mode():
    x = tg.tensor(0.3, dtype=tg.float64)
    val, d = tg.func.jvp(_logistic, (x,), (tg.ones_like(x),))
    assert round(d.item(), 10) == -65.1931590859
    tval, td = torch.func.jvp(_logistic, (torch.tensor(0.3, dtype=torch.float64),),
                              (torch.tensor(1.0, dtype=torch.float64),))
    assert abs(d.item() - td.item()) < 1e-12
    assert abs(val.item() - tval.item()) < 1e-15
    # forward and reverse mode agree
    xr = tg.tensor(0.3, dtype=tg.float64, requires_grad=True)
    _logistic(xr).backward()
    assert abs(xr.grad.item() - d.item()) < 1e-12


def test_dual_api_matches_torch():
    rng = np.random.default_rng(0)
    a, v = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    with fwAD.dual_level():
        x = fwAD.make_dual(tg.tensor(a), tg.tensor(v))
        y = (x.sin() * x).sum(1).exp()
        p, t = fwAD.unpack_dual(y)
        assert p._fw is None and t is not None
        assert fwAD.unpack_dual(tg.tensor(a)).tangent is None
    with tfwAD.dual_level():
        tx = tfwAD.make_dual(torch.tensor(a), torch.tensor(v))
        ty = (tx.sin() * tx).sum(1).exp()
        tp, tt = tfwAD.unpack_dual(ty)
    _close(p, tp)
    _close(t, tt)
    # tangents do not survive the level
    assert y._fw is None and x._fw is None


def test_dual_level_errors():
    x = tg.tensor([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="no dual level"):
        fwAD.make_dual(x, tg.ones(3))
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwAD.make_dual(x, tg.ones(2))
        with pytest.raises(RuntimeError, match="Nested"):
            fwAD.enter_dual_level()
    # a hook left behind would slow down every op
    assert state.dual is None


def test_missing_jvp_names_the_op():
    from tapegrad.ops.registry import defop
    # no jvp, and a backward rule that is not create_graph-safe: nothing to derive from
    op = defop("_test_nojvp", lambda x: x * 2,
               vjp=[lambda xp, g, ans, x: xp.not_a_numpy_function(g)])
    # no jvp, but a create_graph-safe backward rule: J v is derived from it
    op2 = defop("_test_derived", lambda x: np.cumsum(x), vjp=[
        lambda xp, g, ans, x: xp.flip(xp.cumsum(xp.flip(g, 0), 0), 0) if xp is np else
        g @ tg.tensor(np.triu(np.ones((x.shape[0],) * 2)).T.astype(x.dtype))])
    try:
        with fwAD.dual_level():
            x = fwAD.make_dual(tg.tensor([1.0, 2.0]), tg.ones(2))
            with pytest.raises(NotImplementedError, match="_test_nojvp"):
                apply(op, x)
            # without a tangent the op runs as usual
            apply(op, tg.tensor([1.0]))
            y = apply(op2, fwAD.make_dual(tg.tensor([1.0, 2.0, 3.0]),
                                                 tg.tensor([1.0, 10.0, 100.0])))
            np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(force=True), [1, 11, 111])
    finally:
        del OPS["_test_nojvp"], OPS["_test_derived"]


def test_jvp_derived_from_vjp_for_ops_without_jvp_rule():
    import tapegrad.nn.functional as F
    import torch.nn.functional as TF
    rng = np.random.default_rng(0)
    x, v = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    tgt = np.array([0, 2, 1, 4])
    w, b = rng.standard_normal(5), rng.standard_normal(5)
    lab = (v > 0).astype(float)
    cases = [
        (lambda x: F.cross_entropy(x, tg.tensor(tgt)),
         lambda x: TF.cross_entropy(x, torch.tensor(tgt))),
        (lambda x: F.layer_norm(x, (5,), tg.tensor(w), tg.tensor(b)),
         lambda x: TF.layer_norm(x, (5,), torch.tensor(w), torch.tensor(b))),
        (lambda x: F.binary_cross_entropy_with_logits(x, tg.tensor(lab)),
         lambda x: TF.binary_cross_entropy_with_logits(x, torch.tensor(lab))),
        (lambda x: F.nll_loss(tg.log_softmax(x, 1), tg.tensor(tgt)),
         lambda x: TF.nll_loss(torch.log_softmax(x, 1), torch.tensor(tgt))),
        (lambda x: F.batch_norm(x, None, None, tg.tensor(w), tg.tensor(b), training=True),
         lambda x: TF.batch_norm(x, None, None, torch.tensor(w), torch.tensor(b),
                                 training=True)),
    ]
    for f, tf in cases:
        o, t = tg.func.jvp(f, (tg.tensor(x),), (tg.tensor(v),))
        to, tt = torch.func.jvp(tf, (torch.tensor(x),), (torch.tensor(v),))
        _close(o, to)
        _close(t, tt)


def test_integer_results_carry_no_tangent():
    with fwAD.dual_level():
        x = fwAD.make_dual(tg.tensor([1.0, 3.0, 2.0]), tg.ones(3))
        assert (x > 1).dtype == np.bool_
        i = x.argmax()
        assert i._fw is None


# ---- per-op JVP vs torch.func.jvp -----------------------------------------------------
@pytest.mark.parametrize("entry", CORPUS, ids=[c[0] for c in CORPUS])
def test_jvp_vs_torch(entry):
    name, fn, shapes, domain = entry
    xs = _inputs(name, shapes, domain)
    vs = _inputs(name + "v", shapes, "real")
    out, tan = tg.func.jvp(lambda *a: fn(tg, *a), tuple(tg.tensor(x) for x in xs),
                           tuple(tg.tensor(v) for v in vs))
    tout, ttan = torch.func.jvp(lambda *a: fn(torch, *a), tuple(torch.tensor(x) for x in xs),
                                tuple(torch.tensor(v) for v in vs))
    _close(out, tout)
    _close(tan, ttan)
    # float32: same op, looser
    out32, tan32 = tg.func.jvp(lambda *a: fn(tg, *a),
                               tuple(tg.tensor(x, dtype=tg.float32) for x in xs),
                               tuple(tg.tensor(v, dtype=tg.float32) for v in vs))
    assert tan32.dtype == out32.dtype
    _close(tan32, ttan, rtol=1e-4, atol=1e-5)


def test_forward_over_reverse_hvp():
    rng = np.random.default_rng(3)
    a, v = rng.standard_normal(4), rng.standard_normal(4)

    def f(L, x):
        return (L.tanh(x) * x.exp()).sum() + (x ** 3).prod()

    _, hv = tg.func.jvp(tg.func.grad(lambda x: f(tg, x)), (tg.tensor(a),), (tg.tensor(v),))
    _, thv = torch.func.jvp(torch.func.grad(lambda x: f(torch, x)), (torch.tensor(a),),
                            (torch.tensor(v),))
    _close(hv, thv)


# ---- func.vjp / func.grad / jacobians ---------------------------------------------------
def test_func_vjp_and_grad():
    rng = np.random.default_rng(4)
    a, b, u = rng.standard_normal((2, 3)), rng.standard_normal((3,)), rng.standard_normal((2, 3))

    def f(L, x, y):
        return L.sin(x) * y + x

    out, fn = tg.func.vjp(lambda x, y: f(tg, x, y), tg.tensor(a), tg.tensor(b))
    tout, tfn = torch.func.vjp(lambda x, y: f(torch, x, y), torch.tensor(a), torch.tensor(b))
    _close(out, tout)
    for g, tg_ in zip(fn(tg.tensor(u)), tfn(torch.tensor(u))):
        _close(g, tg_)
    # grad with argnums and has_aux
    g = tg.func.grad(lambda x, y: (f(tg, x, y) ** 2).sum(), argnums=(0, 1))(
        tg.tensor(a), tg.tensor(b))
    tgr = torch.func.grad(lambda x, y: (f(torch, x, y) ** 2).sum(), argnums=(0, 1))(
        torch.tensor(a), torch.tensor(b))
    for x, y in zip(g, tgr):
        _close(x, y)
    g, aux = tg.func.grad(lambda x: ((x * 2).sum(), "aux"), has_aux=True)(tg.tensor(a))
    assert aux == "aux"
    _close(g, torch.full((2, 3), 2.0, dtype=torch.float64))
    # second derivative of the logistic map: grad of grad
    x = tg.tensor(0.3, dtype=tg.float64)
    tx = torch.tensor(0.3, dtype=torch.float64)
    _close(tg.func.grad(tg.func.grad(_logistic))(x),
           torch.func.grad(torch.func.grad(_logistic))(tx))
    with pytest.raises(RuntimeError, match="scalar"):
        tg.func.grad(lambda x: x * 2)(tg.tensor(a))


def test_jacobians_vs_torch():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(3)

    def f(L, x):
        return L.softmax(x, 0) * x.sum()

    def s(L, x):
        return (L.exp(x) * L.sin(x)).sum() + (x @ x) ** 2

    tx = torch.tensor(a)
    J = torch.autograd.functional.jacobian(lambda x: f(torch, x), tx)
    H = torch.autograd.functional.hessian(lambda x: s(torch, x), tx)
    _close(tg.func.jacrev(lambda x: f(tg, x))(tg.tensor(a)), J)
    _close(tg.func.jacfwd(lambda x: f(tg, x))(tg.tensor(a)), J)
    _close(tg.func.hessian(lambda x: s(tg, x))(tg.tensor(a)), H)
    AF = tg.autograd.functional
    _close(AF.jacobian(lambda x: f(tg, x), tg.tensor(a)), J)
    _close(AF.hessian(lambda x: s(tg, x), tg.tensor(a)), H)
    v = rng.standard_normal(3)
    for ours, theirs in ((AF.vjp, torch.autograd.functional.vjp),
                         (AF.jvp, torch.autograd.functional.jvp),
                         (AF.hvp, torch.autograd.functional.hvp),
                         (AF.vhp, torch.autograd.functional.vhp)):
        fn = s if ours in (AF.hvp, AF.vhp) else f
        o, r = ours(lambda x: fn(tg, x), tg.tensor(a), tg.tensor(v))
        to, tr = theirs(lambda x: fn(torch, x), tx, torch.tensor(v))
        _close(o, to)
        _close(r, tr)


def test_jacobian_tuples_and_unused():
    rng = np.random.default_rng(6)
    a, b = rng.standard_normal(2), rng.standard_normal(3)

    def f(L, x, y):
        return x * 2, (y ** 2).sum() * x

    J = tg.autograd.functional.jacobian(lambda x, y: f(tg, x, y), (tg.tensor(a), tg.tensor(b)))
    TJ = torch.autograd.functional.jacobian(lambda x, y: f(torch, x, y),
                                            (torch.tensor(a), torch.tensor(b)))
    assert len(J) == 2 and len(J[0]) == 2
    for r, tr in zip(J, TJ):
        for c, tc in zip(r, tr):
            assert tuple(c.shape) == tuple(tc.shape)
            _close(c, tc)
    H = tg.autograd.functional.hessian(lambda x, y: (x * y[:2] if False else x.sum() * y.sum()),
                                       (tg.tensor(a), tg.tensor(b)))
    TH = torch.autograd.functional.hessian(lambda x, y: x.sum() * y.sum(),
                                           (torch.tensor(a), torch.tensor(b)))
    for r, tr in zip(H, TH):
        for c, tc in zip(r, tr):
            _close(c, tc)
    # create_graph=True: the Jacobian is itself differentiable
    x = tg.tensor(a, requires_grad=True)
    tx = torch.tensor(a, requires_grad=True)
    Jx = tg.autograd.functional.jacobian(lambda z: z.exp() * z.sum(), x, create_graph=True)
    TJx = torch.autograd.functional.jacobian(lambda z: z.exp() * z.sum(), tx, create_graph=True)
    (Jx ** 2).sum().backward()
    (TJx ** 2).sum().backward()
    _close(x.grad, tx.grad)


# ---- the mode identity <u, J v> = <J^T u, v>, op by op ------------------------------------
def _record(calls):
    """Run the calls with a recorder in the forward-AD slot: every (op, inputs, kw, res)."""
    seen = []
    class Recorder:
        def propagate(self, op, ins, args, saved, res):
            seen.append((op, ins, {**args, **(saved or {})}, res))

    prev = state.dual
    state.dual = Recorder()
    try:
        for c in calls:
            try:
                c()
            except Exception:
                pass  # a call the corpus cannot make here is simply not recorded
    finally:
        state.dual = prev
    return seen


def _corpus_calls():
    calls = []
    for name, fn, shapes, domain in CORPUS:
        xs = [tg.tensor(x) for x in _inputs(name, shapes, domain)]
        calls.append(lambda fn=fn, xs=xs: fn(tg, *xs))
    for _, info, s in opdb_calls():
        args = tuple(tg.tensor(a) if isinstance(a, np.ndarray) else a for a in s.args)
        calls.append(lambda info=info, args=args, kw=s.kwargs: info.tg_fn(*args, **kw))
    return calls


_RECORDED = None


def _recorded():
    global _RECORDED
    if _RECORDED is None:
        _RECORDED = _record(_corpus_calls())
    return _RECORDED


def _mode_identity(op, ins, kw, res):
    rng = np.random.default_rng(7)
    arrays = [t.numpy(force=True) if isinstance(t, tg.Tensor) else t for t in ins]
    ans = res.numpy(force=True)
    if ans.dtype.kind != "f" or not op.differentiable:
        return None
    tangents = []
    for i, a in enumerate(arrays):
        diff = (isinstance(a, np.ndarray) and a.dtype.kind == "f" and op.vjps[i] is not None)
        tangents.append(rng.standard_normal(a.shape).astype(a.dtype) if diff else None)
    if all(t is None for t in tangents):
        return None
    if not all(np.isfinite(a).all() for a in arrays if isinstance(a, np.ndarray)
               and a.dtype.kind == "f"):
        return None  # NaN samples (issue 14): nan == nan fails the identity; vs torch in opdb
    u = rng.standard_normal(ans.shape).astype(ans.dtype)
    with np.errstate(all="ignore"):
        jv = np.broadcast_to(op.jvp(np, tangents, ans, *arrays, **kw), ans.shape)
        lhs = float(np.sum(u * jv))
        rhs = 0.0
        for i, t in enumerate(tangents):
            if t is None:
                continue
            gi = op.vjps[i](np, u, ans, *arrays, **kw)
            gi = sum_to(np, np.asarray(gi), arrays[i].shape)
            rhs += float(np.sum(gi * t))
    return lhs, rhs


def test_mode_identity_every_recorded_op():
    checked = set()
    for op, ins, kw, res in _recorded():
        if op.jvp is None or not op.differentiable:
            continue
        if any(isinstance(t, tg.Tensor) and t.dtype != np.float64 for t in ins):
            continue
        r = _mode_identity(op, ins, kw, res)
        if r is None:
            continue
        lhs, rhs = r
        f32 = res.dtype != np.float64 or any(
            isinstance(t, tg.Tensor) and t.dtype != np.float64 for t in ins)
        tol = 1e-5 if f32 else 1e-9
        assert abs(lhs - rhs) <= tol * (1 + abs(lhs)), (op.name, lhs, rhs)
        checked.add(op.name)
    core = {"add", "sub", "mul", "div", "pow", "neg", "maximum", "minimum", "exp", "log",
            "sqrt", "rsqrt", "abs", "sin", "cos", "tanh", "sigmoid", "relu", "clamp",
            "where", "matmul", "sum", "mean", "prod", "amax", "amin", "max_dim", "min_dim",
            "var", "std", "logsumexp", "softmax", "log_softmax", "reshape", "expand",
            "permute", "clone", "cast"}
    assert core <= checked, sorted(core - checked)


def _origin(op):
    """The module that defined the op (its forward or rules), for reporting."""
    for f in (op.forward,) + tuple(op.partials or ()) + tuple(op.vjps or ()):
        mod = getattr(f, "__module__", None)
        if mod and mod.startswith("tapegrad.") and mod != "tapegrad.ops.registry":
            return mod
    return "?"


_CORE_MODULES = {"tapegrad.ops.rules.pointwise", "tapegrad.ops.rules.reductions", "tapegrad.ops.rules.products",
                 "tapegrad.ops.rules.softmax", "tapegrad.ops.rules.shape", "tapegrad.ops.pointwise",
                 "tapegrad.autograd.forward_ad"}


def test_every_differentiable_core_op_has_a_jvp():
    import tapegrad.ops.rules.pointwise, tapegrad.ops.rules.reductions, tapegrad.ops.rules.softmax  # noqa
    missing = [n for n, op in OPS.items()
               if op.differentiable and op.jvp is None and _origin(op) in _CORE_MODULES]
    assert not missing, f"table ops without a forward (JVP) rule: {missing}"
