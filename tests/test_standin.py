"""Stand-ins (core/standin.py) against wrong `reads` / `edges_only` declarations.

A recorded node replaces the values its rules never read (by the op's declaration) with
a data-free stand-in, but only for arrays of at least `standin.MIN_BYTES`; the op
database's samples are small, so tests/test_opdb.py never meets one. Here:

  * every differentiable op-database sample, float64, runs with stand-ins for EVERY size
    (`MIN_BYTES = 0`) and must still give PyTorch's gradients, and PyTorch's second
    derivatives where the entry checks them (the graph the first backward records gets
    stand-ins too), on clones of the inputs (non-leaves: what `edges_only` replaces).
    A rule reading a value its declaration says it does not read meets a NaN stand-in
    and the comparison fails. Plus gradgradcheck, one sample per entry, and one
    third-order case, for the backward ops only those record. Together they record a
    node of each of the 105 table ops with a value to stand in for (measured when
    written; a new op's entry in the opdb brings it in);
  * a throwaway op (an `Op` made in the test, never registered in `OPS`) with a wrong
    declaration gives NaN gradients, not zeros, for a large input; anomaly mode names
    the declaration; strict mode still checks add with stand-in inputs.

The op-database tests reuse test_opdb's runner (`_run`) and cases; float64 only (the
float32 and hypothesis variants test the rules, not what a node keeps): about a fifth of
test_opdb.py's time.
"""
import dataclasses
import importlib

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.core import standin
from tapegrad.core.record import apply
from tapegrad.ops.rules import pointwise as E
from tapegrad.ops.registry import OPS, Op
from test_opdb import _cases, _gradcheck_args, _run, _sample


@pytest.fixture
def standins_everywhere(monkeypatch):
    """Stand-ins for arrays of every size, as for large ones."""
    monkeypatch.setattr(standin, "MIN_BYTES", 0)


# ---- the op database with stand-ins everywhere -------------------------------------------
def _through_clones(fn):
    """fn called on clones of its inputs that require grad: non-leaf inputs, which an
    `edges_only` node replaces by stand-ins (leaves it keeps)."""
    def call(*args, **kw):
        return fn(*[a.clone() if getattr(a, "requires_grad", False) else a for a in args],
                  **kw)
    return call


@pytest.mark.parametrize("entry,k", _cases(lambda e, s: e.differentiable))
def test_opdb_gradients_with_standins_everywhere(entry, k, standins_everywhere):
    entry = dataclasses.replace(entry, tg_fn=_through_clones(entry.tg_fn),
                                torch_fn=_through_clones(entry.torch_fn))
    _run(entry, _sample(entry, k), np.float64, *entry.f64_tol, second_order=entry.gradgrad)


def _one_per_entry(cases):
    seen, out = set(), []
    for p in cases:
        if id(p.values[0]) not in seen:
            seen.add(id(p.values[0]))
            out.append(p)
    return out


@pytest.mark.parametrize("entry,k", _one_per_entry(_cases(
    lambda e, s: e.differentiable and e.gradgrad and s.gradcheck)))
def test_gradgradcheck_with_standins_everywhere(entry, k, standins_everywhere):
    """Second order with the incoming gradient as a variable too (gradgradcheck): the
    backward ops that only that runs (embedding_backward, gather_backward, the pooling
    adjoints, zero_at, ...) record nodes with stand-ins. One sample per entry."""
    sample = _sample(entry, k)
    fn = _through_clones(lambda *a: entry.tg_fn(*a, **sample.kwargs))
    with np.errstate(all="ignore"):
        assert tg.autograd.gradgradcheck(fn, _gradcheck_args(sample), **entry.gradcheck_kw)


def test_max_pool2d_third_order_with_standins_everywhere(standins_everywhere):
    """The one backward op gradgradcheck does not record: max_pool2d_gather (the rule of
    max_pool2d_scatter, max_pool2d's rule). Differentiating with respect to the incoming
    gradients, three times, records and runs it."""
    rng = np.random.default_rng(4)
    a = rng.standard_normal((2, 3, 6, 6))
    cots = [rng.standard_normal(s) for s in [(2, 3, 3, 3), (2, 3, 6, 6), (2, 3, 3, 3)]]
    res = []
    for lib in (tg, torch):
        x = lib.tensor(a, requires_grad=True)
        v, u, w = (lib.tensor(c, requires_grad=True) for c in cots)
        y = lib.nn.functional.max_pool2d(x.clone(), 2)
        (g1,) = lib.autograd.grad(y, x, v, create_graph=True)   # scatter(v)
        (g2,) = lib.autograd.grad(g1, v, u, create_graph=True)  # gather(u)
        (g3,) = lib.autograd.grad(g2, u, w)                     # scatter(w)
        res.append([t.detach().numpy() for t in (g1, g2, g3)])
    for ours, theirs in zip(*res):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_fixture_makes_standins_for_small_arrays(standins_everywhere):
    """The run above is not vacuous: a small product's node holds a stand-in (NaN), and
    so does a small add's non-leaf input."""
    x = tg.randn(2, 3, requires_grad=True)
    w = tg.randn(3, 4, requires_grad=True)
    y = x @ w
    assert standin.is_stub(y.grad_fn.ans) and np.isnan(y.grad_fn.ans).all()
    z = y + 1.0
    assert standin.is_stub(z.grad_fn.inputs[0]._data)
    z.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.ones((2, 4)) @ w.detach().numpy().T)


def test_small_arrays_keep_their_values_by_default():
    x = tg.randn(2, 3, requires_grad=True)
    y = x @ tg.randn(3, 4)
    assert not standin.is_stub(y.grad_fn.ans)
    assert standin.MIN_BYTES == 1 << 16


# ---- what a stand-in holds ------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64",
                                   "complex128"])
def test_float_standins_hold_nan(dtype):
    s = standin.stub(np.empty((300, 300), dtype))
    assert s.shape == (300, 300) and s.dtype == dtype and not s.flags.writeable
    assert s.strides == (0, 0)  # no memory held
    assert np.isnan(s.real).all()
    if s.dtype.kind == "c":
        assert np.isnan(s.imag).all()
    assert standin.stub(np.empty((300, 300), dtype)) is s  # one per (shape, dtype)
    assert standin.is_stub(s)


@pytest.mark.parametrize("dtype", ["int64", "int8", "bool"])
def test_integer_standins_hold_zero(dtype):
    s = standin.stub(np.empty((300, 300), dtype))
    assert s.dtype == dtype and not s.any()


# ---- a wrong declaration gives NaN, not zeros ----------------------------------------------------
_BIG = (128, 128)  # float64: 128 KiB >= MIN_BYTES, a stand-in without any patching


def _exp_op(reads):
    # exp's rule reads its output, g * ans; `reads` is the declaration under test
    return Op("standin_probe_exp", np.exp, vjp=[lambda xp, g, ans, x: g * ans], reads=reads)


def _mul_op(**decl):
    # mul's rules read the other input's values
    return Op("standin_probe_mul", np.multiply, inputs=("x", "y"),
              vjp=[lambda xp, g, ans, x, y: g * y, lambda xp, g, ans, x, y: g * x], **decl)


def _exp_grad(op):
    a = np.random.default_rng(0).standard_normal(_BIG)
    x = tg.tensor(a, requires_grad=True)
    apply(op, x).sum().backward()
    xt = torch.tensor(a, requires_grad=True)
    torch.exp(xt).sum().backward()
    return x.grad.numpy(), xt.grad.numpy()


def test_wrong_reads_gives_nan_gradients():
    got, want = _exp_grad(_exp_op(reads=["x"]))  # wrong: the rule reads ans, not x
    assert np.isnan(got).all(), "a rule that read a stand-in gave non-NaN gradients"
    got, want = _exp_grad(_exp_op(reads=["ans"]))  # the right declaration
    np.testing.assert_allclose(got, want, rtol=1e-12)
    assert "standin_probe_exp" not in OPS


def _mul_grads(op):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(_BIG), rng.standard_normal(_BIG)
    x, y = tg.tensor(a, requires_grad=True), tg.tensor(b, requires_grad=True)
    apply(op, x * 1.0, y * 1.0).sum().backward()  # non-leaf inputs: stand-ins if edges_only
    xt, yt = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ((xt * 1.0) * (yt * 1.0)).sum().backward()
    return (x.grad.numpy(), y.grad.numpy()), (xt.grad.numpy(), yt.grad.numpy())


def test_wrong_edges_only_gives_nan_gradients():
    got, want = _mul_grads(_mul_op(reads=["", ""], edges_only=True))  # wrong
    assert all(np.isnan(g).all() for g in got)
    got, want = _mul_grads(_mul_op(reads=["y", "x"]))  # right
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    assert "standin_probe_mul" not in OPS


def test_anomaly_mode_names_the_declaration():
    x = tg.tensor(np.random.default_rng(2).standard_normal(_BIG), requires_grad=True)
    with pytest.warns(UserWarning, match="Anomaly"), tg.autograd.detect_anomaly():
        y = apply(_exp_op(reads=["x"]), x)
        with pytest.raises(RuntimeError, match=r"keeps no values of output .*declaration "
                                               r"of 'standin_probe_exp' is wrong"):
            y.sum().backward()


# ---- tools that re-run an op on a node's inputs --------------------------------------------------
def test_strict_mode_checks_add_with_standin_inputs(monkeypatch):
    """Strict mode re-runs add's forward on its inputs: stand-ins (edges_only) become
    zeros there, so a wrong rule is still caught (at NaN no difference is finite)."""
    strict = importlib.import_module("tapegrad.autograd.strict")  # (the name is a function)
    monkeypatch.setattr(E.add, "vjps", (lambda xp, g, ans, x, y: 2 * g, E.add.vjps[1]))
    strict.reset_strict_cache()
    rng = np.random.default_rng(3)
    x = tg.tensor(rng.standard_normal(_BIG), requires_grad=True)
    y = tg.tensor(rng.standard_normal(_BIG), requires_grad=True)
    z = (x * 1.0) + (y * 1.0)
    assert standin.is_stub(z.grad_fn.inputs[0]._data)
    with tg.autograd.strict(), pytest.raises(strict.StrictModeError, match="'add'"):
        z.sum().backward()
    strict.reset_strict_cache()
