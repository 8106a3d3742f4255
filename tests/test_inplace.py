"""In-place ops vs PyTorch: values, gradients through rebased history, version
counters and the errors PyTorch raises (leaf, view of leaf, saved tensor modified,
dtype and shape), forward mode and create_graph through in-place ops."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.autograd import forward_ad as fwAD

from _helpers import assert_close as _close


def _pair(arr, requires_grad=False):
    return (tg.tensor(arr, requires_grad=requires_grad),
            torch.tensor(arr, requires_grad=requires_grad))


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None, None


rng = np.random.default_rng(0)
A = rng.uniform(0.5, 1.5, (2, 3))
B = rng.uniform(0.5, 1.5, (2, 3))
ROW = rng.uniform(0.5, 1.5, (3,))
MASK = np.array([[True, False, True], [False, False, True]])

# (name, fn(lib, y, w)): y is a non-leaf made from x; w is a leaf requiring grad
CHAINS = [
    ("add_", lambda L, y, w: y.add_(w)),
    ("add_alpha", lambda L, y, w: y.add_(w, alpha=-2.5)),
    ("sub_", lambda L, y, w: y.sub_(w[0])),
    ("mul_", lambda L, y, w: y.mul_(w)),
    ("mul_scalar", lambda L, y, w: y.mul_(3.0)),
    ("div_", lambda L, y, w: y.div_(w)),
    ("pow_", lambda L, y, w: y.pow_(2.5)),
    ("pow_tensor", lambda L, y, w: y.pow_(w)),
    ("exp_", lambda L, y, w: y.exp_()),
    ("tanh_", lambda L, y, w: y.tanh_()),
    ("sigmoid_", lambda L, y, w: y.sigmoid_()),
    ("relu_", lambda L, y, w: y.sub_(1.0).relu_()),
    ("neg_", lambda L, y, w: y.neg_()),
    ("clamp_", lambda L, y, w: y.clamp_(0.8, 1.2)),
    ("clamp_min_", lambda L, y, w: y.clamp_(min=1.0)),
    ("masked_fill_", lambda L, y, w: y.masked_fill_(L.tensor(MASK), 0.5)),
    ("masked_fill_tensor", lambda L, y, w: y.masked_fill_(L.tensor(MASK), w[0, 1])),
    ("fill_", lambda L, y, w: y.fill_(2.0)),
    ("fill_tensor", lambda L, y, w: y.fill_(w[1, 2])),
    ("zero_", lambda L, y, w: y.zero_()),
    ("copy_", lambda L, y, w: y.copy_(w * 2)),
    ("copy_broadcast", lambda L, y, w: y.copy_(w[0])),
    ("iadd", lambda L, y, w: y.__iadd__(w)),
    ("isub", lambda L, y, w: y.__isub__(w)),
    ("imul", lambda L, y, w: y.__imul__(w)),
    ("itruediv", lambda L, y, w: y.__itruediv__(w)),
    ("chain", lambda L, y, w: y.mul_(w).add_(1.0).sub_(w).mul_(w).tanh_()),
    ("addcmul_", lambda L, y, w: y.addcmul_(w, w, value=0.5)),
    ("addcdiv_", lambda L, y, w: y.addcdiv_(w, w + 1, value=-2.0)),
]


def _run_chain(L, fn, arr_x, arr_w):
    x = L.tensor(arr_x, requires_grad=True)
    w = L.tensor(arr_w, requires_grad=True)
    y = x * 1.5
    out = fn(L, y, w)
    loss = (out * L.tensor(B)).sum() + (y ** 2).sum()
    loss.backward()
    return y, x.grad, w.grad, y._version


@pytest.mark.parametrize("entry", CHAINS, ids=[c[0] for c in CHAINS])
def test_inplace_gradients_match_torch(entry):
    name, fn = entry
    y, gx, gw, ver = _run_chain(tg, fn, A, A[::-1].copy())
    ty, tgx, tgw, tver = _run_chain(torch, fn, A, A[::-1].copy())
    _close(y, ty)
    _close(gx, tgx)
    if tgw is None:
        assert gw is None or np.all(gw.numpy(force=True) == 0)
    else:
        _close(gw, tgw)
    assert ver == tver, (ver, tver)
    assert not y.is_leaf and y.requires_grad


@pytest.mark.parametrize("entry", CHAINS, ids=[c[0] for c in CHAINS])
def test_inplace_under_no_grad(entry):
    name, fn = entry
    x, tx = _pair(A)
    w, tw = _pair(A[::-1].copy(), requires_grad=True)
    with tg.no_grad():
        out = fn(tg, x, w)
    with torch.no_grad():
        tout = fn(torch, tx, tw)
    assert out is x and tout is tx
    _close(x, tx)
    assert x._version == tx._version
    assert x.grad_fn is None and not x.requires_grad


def test_returns_self_and_bumps_version():
    x = tg.zeros(3)
    data = x.numpy(force=True)
    assert x.add_(1) is x and x.numpy(force=True) is data
    x += 2
    assert x.numpy(force=True) is data and x._version == 2
    np.testing.assert_array_equal(x.numpy(force=True), [3, 3, 3])
    # no graph is needed when nothing requires grad
    assert x.grad_fn is None


def test_leaf_errors_match_torch():
    for fn in (lambda L, l: l.add_(1), lambda L, l: l.zero_(), lambda L, l: l.mul_(2),
               lambda L, l: l.__iadd__(1), lambda L, l: l.normal_(),
               lambda L, l: l.copy_(L.ones(3)), lambda L, l: l.exp_()):
        t = _err(lambda: fn(tg, tg.zeros(3, requires_grad=True)))
        tt = _err(lambda: fn(torch, torch.zeros(3, requires_grad=True)))
        assert t[0] is RuntimeError and t == tt, (t, tt)
    # allowed under no_grad (how optimizers update parameters)
    p = tg.ones(3, requires_grad=True)
    with tg.no_grad():
        p.sub_(tg.tensor([0.1, 0.2, 0.3]), alpha=2)
    np.testing.assert_allclose(p.numpy(force=True), [0.8, 0.6, 0.4], rtol=1e-6)
    assert p.is_leaf and p.requires_grad


def test_view_of_leaf_error():
    t = _err(lambda: tg.zeros(3, requires_grad=True).view(3).add_(1))
    tt = _err(lambda: torch.zeros(3, requires_grad=True).view(3).add_(1))
    assert t == tt
    t = _err(lambda: tg.zeros(2, 3, requires_grad=True).permute(1, 0).mul_(2))
    assert t[0] is RuntimeError and "view of a leaf" in t[1]


def test_dtype_and_shape_errors_match_torch():
    cases = [
        lambda L: L.zeros(3, dtype=L.int64).add_(1.5),
        lambda L: L.zeros(3, dtype=L.bool).add_(1),
        lambda L: L.zeros(3).add_(L.ones(2, 3)),
        lambda L: L.zeros(1, 3).expand(2, 3).add_(1),
        lambda L: L.zeros(3, dtype=L.int64).mul_(L.ones(3)),
    ]
    for c in cases:
        t, tt = _err(lambda: c(tg)), _err(lambda: c(torch))
        assert t[0] is RuntimeError and t == tt, (t, tt)
    # allowed casts: float64 operand into float32, int into float
    x = tg.zeros(3)
    x.add_(tg.ones(3, dtype=tg.float64))
    x.add_(tg.ones(3, dtype=tg.int64))
    assert x.dtype == np.float32 and x.numpy(force=True)[0] == 2


def test_saved_tensor_modified_raises():
    # input saved by mul, then changed: backward names the op and both versions
    w = tg.randn(3, requires_grad=True)
    x = w * 2
    z = x * w
    x.add_(1)
    with pytest.raises(RuntimeError, match=r"modified by an inplace operation.*mul.*"
                                           r"version 1; expected version 0"):
        z.sum().backward()
    tw = torch.randn(3, requires_grad=True)
    tx = tw * 2
    tz = tx * tw
    tx.add_(1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        tz.sum().backward()
    # output saved by exp, then changed
    l = tg.zeros(3, requires_grad=True)
    y = l.exp()
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"exp.*version 1; expected version 0"):
        y.sum().backward()
    # an op that saves nothing: add's backward does not read x, so no error (as torch)
    w = tg.randn(3, requires_grad=True)
    x = w * 2
    z = x + w
    x.mul_(3)
    z.sum().backward()
    tw = torch.tensor(w.numpy(force=True), requires_grad=True)
    tx = tw * 2
    tz = tx + tw
    tx.mul_(3)
    tz.sum().backward()
    _close(w.grad, tw.grad)


def test_exp_then_div_raises_like_torch():
    # exp_ saves its output; div_ then changes it (torch raises too)
    for L in (tg, torch):
        w = L.tensor(A[0], requires_grad=True)
        y = w * 1.5
        y.exp_().div_(w + 1)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()


def test_earlier_consumers_see_the_old_history():
    # z used x before x was changed in place; z's gradient must follow x's OLD history
    for L in (tg, torch):
        w = L.tensor(A[0], requires_grad=True)
        x = w * 2
        z = x + w          # add saves nothing, so no version error
        x.mul_(w)          # x now has a new history (mul)
        x.add_(1)
        (z.sum() + (x * 3).sum()).backward()
        if L is tg:
            ours = w.grad
        else:
            _close(ours, w.grad)


def test_self_operand_is_saved_then_modified():
    # y.mul_(y): PyTorch raises (the saved operand is y itself, now modified)
    a = tg.randn(3, requires_grad=True)
    y = a * 1
    y.mul_(y)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_detach_shares_version_counter():
    x = tg.randn(3, requires_grad=True)
    y = x.exp()
    d = y.detach()
    d.zero_()
    assert y._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    tx = torch.randn(3, requires_grad=True)
    ty = tx.exp()
    ty.detach().zero_()
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        ty.sum().backward()


def test_no_copy_when_the_rule_does_not_read_the_old_value():
    x = tg.randn(3, requires_grad=True)
    y = x * 2
    y.add_(1)
    old = y.grad_fn.inputs[0]
    assert old.numpy(force=True) is y.numpy(force=True)  # add's rule reads no input values: no copy kept
    y.mul_(3)
    old = y.grad_fn.inputs[0]
    assert old.numpy(force=True) is not y.numpy(force=True)  # mul's rule reads it: a copy of the old value
    np.testing.assert_allclose(old.numpy(force=True) * 3, y.numpy(force=True), rtol=1e-6)


def test_tensor_without_grad_gets_history_from_other_operand():
    w, tw = _pair(A, requires_grad=True)
    acc, tacc = tg.zeros(2, 3, dtype=tg.float64), torch.zeros(2, 3, dtype=torch.float64)
    for _ in range(3):
        acc += w * w
        tacc += tw * tw
    assert acc.requires_grad and acc.grad_fn is not None
    acc.sum().backward()
    tacc.sum().backward()
    _close(w.grad, tw.grad)
    _close(acc, tacc)


def test_hooks_and_retain_grad_across_inplace():
    arr = rng.standard_normal(3)
    out = []
    for L in (tg, torch):
        a = L.tensor(arr, requires_grad=True)
        y = a * 1
        y.retain_grad()
        seen = []
        y.register_hook(lambda g: seen.append(g))
        y.mul_(3)
        (y * y).sum().backward()
        out.append((y.grad, seen[0], a.grad))
    for ours, theirs in zip(*out):
        _close(ours, theirs)


def test_forward_mode_through_inplace():
    a, v = rng.standard_normal(4), rng.standard_normal(4)
    import torch.autograd.forward_ad as tfw
    tangents = []
    for L, fw in ((tg, fwAD), (torch, tfw)):
        with fw.dual_level():
            x = fw.make_dual(L.tensor(a), L.tensor(v))
            y = x * 1
            y.mul_(x).exp_()
            y.add_(2.0)
            tangents.append(fw.unpack_dual(y).tangent)
    _close(*tangents)


def test_create_graph_through_inplace():
    a = rng.uniform(0.5, 1.5, 3)
    res = []
    for L in (tg, torch):
        x = L.tensor(a, requires_grad=True)
        y = x * 1
        y.mul_(x).sigmoid_()
        (g,) = (tg if L is tg else torch).autograd.grad(y.sum(), x, create_graph=True)
        (gg,) = (tg if L is tg else torch).autograd.grad((g * g).sum(), x)
        res.append((g, gg))
    _close(res[0][0], res[1][0])
    _close(res[0][1], res[1][1])


def test_random_fills():
    tg.manual_seed(3)
    x = tg.empty(1000, dtype=tg.float64).normal_(2.0, 0.5)
    assert abs(x.numpy(force=True).mean() - 2.0) < 0.1 and abs(x.numpy(force=True).std() - 0.5) < 0.05
    tg.manual_seed(3)
    x2 = tg.empty(1000, dtype=tg.float64).normal_(2.0, 0.5)
    np.testing.assert_array_equal(x.numpy(force=True), x2.numpy(force=True))
    u = tg.zeros(1000).uniform_(-1, 3)
    assert u.dtype == np.float32 and u.numpy(force=True).min() >= -1 and u.numpy(force=True).max() <= 3
    assert u._version == 1
    p = tg.zeros(5, requires_grad=True)
    with tg.no_grad():
        p.uniform_(0, 1)
    assert p.is_leaf and (p.numpy(force=True) > 0).all()
    # on a non-leaf the old value gets a zero gradient (torch: NormalBackward)
    w = tg.ones(3, requires_grad=True)
    y = w * 2
    y.normal_()
    (y * 2).sum().backward()
    np.testing.assert_array_equal(w.grad.numpy(force=True), 0)


def test_div_rounding_mode_values():
    for mode in ("trunc", "floor"):
        x, tx = _pair(np.array([-7.0, -2.5, 3.5, 7.0]))
        x.div_(2, rounding_mode=mode)
        tx.div_(2, rounding_mode=mode)
        _close(x, tx)
        i, ti = tg.tensor([-7, 7]), torch.tensor([-7, 7])
        i.div_(2, rounding_mode=mode)
        ti.div_(2, rounding_mode=mode)
        np.testing.assert_array_equal(i.numpy(force=True), ti.numpy())


# Whether changing a tensor in place after it was used breaks backward depends on what
# the op's backward reads (sin reads its input, exp its output, a / 2 neither of a's
# values...). The check follows the rules that will run, as PyTorch's saved variables do.
ERROR_CASES = {
    "sin_out": lambda L, x: _mod_out(x.sin()),
    "abs_out": lambda L, x: _mod_out(x.abs()),
    "exp_out": lambda L, x: _mod_out(x.exp()),
    "relu_out": lambda L, x: _mod_out(x.relu()),
    "tanh_out": lambda L, x: _mod_out(x.tanh()),
    "clamp_out": lambda L, x: _mod_out(x.clamp(0, 1)),
    "matmul_out": lambda L, x: _mod_out(x.reshape(3, 1) @ x.reshape(1, 3)),
    "sum_out": lambda L, x: _mod_out(x.sum()),
    "softmax_out": lambda L, x: _mod_out(L.softmax(x, 0)),
    "div_scalar_then_add": lambda L, x: _mod_out((x * 1).div_(2)),
    "pow_scalar_then_add": lambda L, x: _mod_out((x * 1).pow_(2)),
    "exp_in": lambda L, x: _mod_in(L, lambda h: h.exp()),
    "sin_in": lambda L, x: _mod_in(L, lambda h: h.sin()),
    "mul_scalar_in": lambda L, x: _mod_in(L, lambda h: h * 3),
    "mul_tensor_in": lambda L, x: _mod_in(L, lambda h: h * x),
    "div_by_in": lambda L, x: _mod_in(L, lambda h: x / h),
    "where_in": lambda L, x: _mod_in(L, lambda h: L.where(h > 1, h, x)),
}


def _mod_out(h):
    h += 1
    h.sum().backward()


def _mod_in(L, fn):
    x = L.tensor([0.5, 1.5, 2.0], requires_grad=True)
    h = x * 1
    y = fn(h)
    h.mul_(2)
    y.sum().backward()


@pytest.mark.parametrize("name", list(ERROR_CASES))
def test_which_inplace_changes_break_backward_matches_torch(name):
    outcome = []
    for L in (tg, torch):
        x = L.tensor([0.5, 1.5, 2.0], requires_grad=True)
        try:
            ERROR_CASES[name](L, x)
            outcome.append("ok")
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            outcome.append("error")
    assert outcome[0] == outcome[1], outcome


def test_extras_aliasing_the_output_are_version_checked():
    # an op that keeps its output in its saved values (and declares it reads only that):
    # changing the output in place must still be caught, not give silently wrong gradients
    from tapegrad.core.record import apply
    from tapegrad.ops.registry import OPS, defop

    def fwd(x):
        out = np.tanh(x)
        return out, {"t": out}

    op = defop("_test_alias_extra", fwd, extra=True, reads=[""],
               vjp=[lambda xp, g, ans, x, t=None: g * (1 - t * t)])
    try:
        x = tg.tensor([0.1, 0.2], requires_grad=True)
        y = apply(op, x)
        y += 1
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            y.sum().backward()
        x = tg.tensor([0.1, 0.2], requires_grad=True)
        y = apply(op, x)
        y.sum().backward()  # unchanged: fine
    finally:
        del OPS["_test_alias_extra"]


VIEW_CASES = {
    "view": lambda y: y.view(2, 3),
    "reshape": lambda y: y.reshape(3, 2),
    "permute": lambda y: y.reshape(2, 3).permute(1, 0),
    "transpose": lambda y: y.reshape(2, 3).transpose(0, 1),
    "slice": lambda y: y[1:4],
    "select": lambda y: y.reshape(2, 3)[1],
    "unsqueeze": lambda y: y.unsqueeze(0),
    "expand": lambda y: y.reshape(1, 6).expand(2, 6),
}


@pytest.mark.parametrize("name", list(VIEW_CASES))
def test_views_share_the_version_counter(name):
    make = VIEW_CASES[name]
    out = []
    for L in (tg, torch):
        x = L.tensor(np.arange(1.0, 7.0), requires_grad=True)
        y = x * 1
        v = make(y)
        z = v * v  # saves the view
        y.add_(1)  # changes the view's memory through the base
        try:
            z.sum().backward()
            out.append("ok")
        except RuntimeError as e:
            assert "modified by an inplace operation" in str(e)
            out.append("error")
        # and the other way round, under no_grad: a change through the view bumps the base
        with L.no_grad():
            b = L.zeros(6)
            w = make(b)
            if name != "expand":
                w.mul_(2)
                vb = b._version
                assert vb == 1, name
    assert out == ["error", "error"], out


VIEW_INPLACE = {
    "slice_mul": lambda L, h, m, mt, w: h[1:4].mul_(w),
    "row_of_view": lambda L, h, m, mt, w: m[1].mul_(w),
    "base_changed": lambda L, h, m, mt, w: h.mul_(3),
    "view_of_view": lambda L, h, m, mt, w: mt[0].mul_(w[:2]),
    "two_changes": lambda L, h, m, mt, w: (mt.mul_(2), m[0].add_(w)),
    "mixed": lambda L, h, m, mt, w: (mt.mul_(2), m[0].add_(w), h.mul_(w[0]), mt[1].exp_()),
    "augmented_index": lambda L, h, m, mt, w: _aug(m, h, w),
    "new_view_then_change": lambda L, h, m, mt, w: (h[1:4].mul_(w), h.view(3, 2)[0].add_(1)),
    "select_fill": lambda L, h, m, mt, w: m[:, 2].fill_(0.5),
    "setitem_scalar": lambda L, h, m, mt, w: m.__setitem__((0, 1), 7.0),
}


def _aug(m, h, w):
    m[:, 1] += w[:2]  # getitem view, in-place add, then setitem
    h[2:] *= 3


@pytest.mark.parametrize("name", list(VIEW_INPLACE))
def test_inplace_on_views_matches_torch(name):
    res = []
    for L in (tg, torch):
        x = L.tensor(np.arange(1.0, 7.0) * 0.1, requires_grad=True)
        w = L.tensor(np.arange(2.0, 5.0) * 0.1, requires_grad=True)
        h = x * 2
        m = h.view(2, 3)
        mt = m.t()
        VIEW_INPLACE[name](L, h, m, mt, w)
        y = (m ** 2).sum() + (mt * mt * mt).sum() + (h * L.tensor(np.arange(6.0))).sum()
        y.backward()
        res.append((h, m, mt, x.grad, w.grad))
    for a, b in zip(*res):
        if b is None:
            assert a is None or np.all(a.numpy(force=True) == 0)
        else:
            _close(a, b)


def test_normalize_then_add_in_place():
    # div's divisor rule reads x and y, not the output: h /= norm; h += 1 is allowed
    out = []
    for L in (tg, torch):
        a = L.tensor([1.0, 2.0, 3.0], requires_grad=True)
        h = a * 2
        h = h / (h * h).sum().sqrt()
        h += 1
        (h * L.tensor([1.0, -2.0, 0.5])).sum().backward()
        out.append(a.grad)
    _close(out[0], out[1])


def test_inplace_change_after_max_dim_is_allowed_as_in_torch():
    """max(dim)'s backward reads only the saved indices, so changing x afterwards is fine."""
    a = np.random.default_rng(0).standard_normal((3, 4))
    x0 = tg.tensor(a, requires_grad=True)
    t0 = torch.tensor(a, requires_grad=True)
    x, t = x0 * 1, t0 * 1
    v, _ = x.max(1)
    tv, _ = t.max(1)
    x.add_(1)
    t.add_(1)
    (v * 2).sum().backward()
    (tv * 2).sum().backward()
    np.testing.assert_array_equal(x0.grad.numpy(force=True), t0.grad.numpy())


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("op", ["add", "sub", "mul", "div"])
def test_update_loop_forms_match_torch(op, dtype):
    # NOTE: not float16: torch multiplies a Half tensor by a Python scalar in float32
    # (its opmath) and rounds once; tapegrad (NumPy) rounds 0.1 to float16 first, so
    # `0.1 * g` differs in the last bit (a known difference, not this path's)
    # the lectures' update `p.data += -lr * p.grad` / `p.data -= lr * p.grad` (a same-shape,
    # same-dtype operand with nothing recorded: inplace.py's one-ufunc path) and its
    # neighbours that take the general path (broadcast operand, other dtype, grad mode on)
    r = np.random.default_rng(3)
    w0, g0 = r.uniform(0.5, 1.5, (4, 3)), r.uniform(0.5, 1.5, (4, 3))
    name = {"add": "__iadd__", "sub": "__isub__", "mul": "__imul__", "div": "__itruediv__"}[op]
    out = {}
    for lib in (tg, torch):
        p = lib.tensor(w0.astype(dtype), requires_grad=True)
        p.grad = lib.tensor(g0.astype(dtype))
        d = p.data
        getattr(d, name)(0.1 * p.grad)
        with lib.no_grad():
            getattr(p, f"{op}_")(p.grad[0])          # broadcast: the general path
            getattr(p, f"{op}_")(p.grad.double())     # a wider operand: cast back
        version = d._version
        out[lib] = p.detach().numpy().copy(), version
    (ours, ours_v), (theirs, theirs_v) = out[tg], out[torch]
    assert ours.dtype == theirs.dtype
    np.testing.assert_array_equal(ours, theirs)
    assert ours_v == 1  # d's own counter (torch: .data's counter is shared)


def test_update_loop_form_errors_match_torch():
    # a read-only array and grad mode on a leaf keep their errors on the fast path's inputs
    p = tg.tensor(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        p -= tg.ones(3, dtype=tg.float64)
    ro = np.ones(3)
    ro.flags.writeable = False
    t = tg.from_numpy(ro)
    with pytest.raises(RuntimeError, match="read-only"):
        t -= tg.ones(3, dtype=tg.float64)
    i = tg.ones(3, dtype=tg.int64)
    with pytest.raises(RuntimeError) as ours:
        i -= tg.full((3,), 0.5)
    with pytest.raises(RuntimeError) as theirs:
        ti = torch.ones(3, dtype=torch.int64)
        ti -= torch.full((3,), 0.5)
    assert str(ours.value) == str(theirs.value)


def test_version_is_an_int_shared_with_views_as_torch():
    out = {}
    for L in (tg, torch):
        x = L.zeros(4)
        v = x[1:3]
        v.add_(1)
        x.mul_(2)
        d = x.detach()
        d.add_(1)
        out[L] = (x._version, v._version, d._version)
        assert type(x._version) is int
    assert out[tg] == out[torch], out
    with pytest.raises(AttributeError):
        tg.zeros(2)._version = 5  # read-only, as torch's
