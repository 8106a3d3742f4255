"""Differential tests of every op-database entry (tests/opdb/) against PyTorch.

For every entry and sample:
  * forward values and first-order gradients vs PyTorch, float64 (rtol 1e-10) and
    float32 (rtol 1e-5 / atol 1e-6 unless the entry says otherwise);
  * float64 central-difference gradcheck (tg.autograd.gradcheck);
  * second order: grad-of-grad vs PyTorch, and gradgradcheck;
  * hypothesis: random shapes (0-d, size-1 dims, broadcasting) and values, incl. ties;
and a coverage test: every op of the derivative table has an entry.
"""
import importlib
import pkgutil

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tapegrad as tg
from opdb import OP_DB, PENDING, covered_ops

_TORCH_DT = {np.dtype("float32"): torch.float32, np.dtype("float64"): torch.float64}
_KIND = {torch.float32: "f", torch.float64: "f", torch.float16: "f", torch.int64: "i",
         torch.int32: "i", torch.bool: "b"}


# ---- running one sample in both libraries -------------------------------------------------
def _inputs(sample, lib, dtype):
    """Sample args -> library args; returns (args, leaves that require grad)."""
    args, leaves = [], []
    for i, a in enumerate(sample.args):
        if isinstance(a, np.generic):
            a = np.asarray(a)  # a NumPy scalar is a 0-d array here, not a Python number
        if isinstance(a, np.ndarray):
            if a.dtype.kind == "f":
                a = a.astype(dtype)
                rg = i not in sample.nograd
                t = (tg.tensor(a, requires_grad=rg) if lib is tg
                     else torch.tensor(a, requires_grad=rg))
                if rg:
                    leaves.append(t)
            else:
                t = tg.tensor(a) if lib is tg else torch.tensor(a)
            args.append(t)
        else:
            args.append(a)
    return args, leaves


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


def _np(t):
    if isinstance(t, torch.Tensor):
        return t.detach().numpy(force=True)
    return np.asarray(t if isinstance(t, np.ndarray) else t.detach().numpy())


def _close(a, b, rtol, atol, what):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} (tapegrad) vs {b.shape} (torch)"
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)


def _run(entry, sample, dtype, rtol, atol, second_order=False):
    """Forward + VJP in both libraries and compare (optionally grad of grad too)."""
    rng = np.random.default_rng(1)
    tg_args, tg_leaves = _inputs(sample, tg, dtype)
    th_args, th_leaves = _inputs(sample, torch, dtype)
    with np.errstate(all="ignore"):
        tg_out = _flat(entry.tg_fn(*tg_args, **sample.kwargs))
        th_out = _flat(entry.torch_fn(*th_args, **sample.kwargs))
    assert len(tg_out) == len(th_out)
    for k, (a, b) in enumerate(zip(tg_out, th_out)):
        assert isinstance(a, tg.Tensor), f"output {k} is a {type(a).__name__}"
        assert np.dtype(a.dtype).kind == _KIND[b.dtype], \
            f"output {k}: dtype {a.dtype} (tapegrad) vs {b.dtype} (torch)"
        if b.dtype in _TORCH_DT.values():
            assert _TORCH_DT[np.dtype(a.dtype)] == b.dtype, f"output {k}: {a.dtype} vs {b.dtype}"
        _close(a, b, rtol, atol, f"{entry.id} {sample.id()} output {k}")
    if not entry.differentiable or not th_leaves:
        return
    # first order: v^T J with the same random cotangents
    pairs = [(a, b) for a, b in zip(tg_out, th_out) if b.requires_grad]
    assert all(a.requires_grad for a, _ in pairs), "tapegrad output does not require grad"
    if not pairs:
        return
    cots = [rng.standard_normal(tuple(b.shape)).astype(np.dtype(a.dtype)) for a, b in pairs]
    with np.errstate(all="ignore"):
        tg_g = tg.autograd.grad([a for a, _ in pairs], tg_leaves,
                                [tg.tensor(c) for c in cots], allow_unused=True,
                                create_graph=second_order)
    th_g = torch.autograd.grad([b for _, b in pairs], th_leaves,
                               [torch.tensor(c) for c in cots], allow_unused=True,
                               create_graph=second_order)
    for i, (a, b) in enumerate(zip(tg_g, th_g)):
        if b is None:
            b = torch.zeros_like(th_leaves[i])
        if a is None:
            a = tg.zeros_like(tg_leaves[i])
        assert a.dtype == tg_leaves[i].dtype, f"grad {i} has dtype {a.dtype}"
        _close(a, b, rtol, atol, f"{entry.id} {sample.id()} grad of input {i}")
    if not second_order:
        return
    # second order: d/dx of sum_i <grad_i, w_i>
    ws = [rng.standard_normal(tuple(t.shape)).astype(dtype) for t in th_leaves]
    tg_terms = [(a * tg.tensor(w)).sum() for a, w in zip(tg_g, ws)
                if a is not None and a.requires_grad]
    th_terms = [(b * torch.tensor(w)).sum() for b, w in zip(th_g, ws)
                if b is not None and b.requires_grad]
    if not th_terms:
        return
    if not tg_terms:
        # torch's grad depends on the inputs; ours must then be constant there: compare
        # torch's second derivative with zero
        tg_gg = [None] * len(th_leaves)
    else:
        with np.errstate(all="ignore"):
            tg_gg = tg.autograd.grad(sum(tg_terms[1:], tg_terms[0]), tg_leaves,
                                     allow_unused=True)
    th_gg = torch.autograd.grad(sum(th_terms[1:], th_terms[0]), th_leaves, allow_unused=True)
    for i, (a, b) in enumerate(zip(tg_gg, th_gg)):
        a = np.zeros(th_leaves[i].shape) if a is None else a
        b = torch.zeros_like(th_leaves[i]) if b is None else b
        _close(a, b, rtol, atol, f"{entry.id} {sample.id()} second derivative, input {i}")


def _cases(pred=lambda e, s: True):
    out = []
    for e in OP_DB:
        for k, s in enumerate(e.samples(np.random.default_rng(0), e)):
            if pred(e, s):
                out.append(pytest.param(e, k, id=f"{e.id}-{k}-{s.id()}"))
    return out


def _sample(entry, k):
    return entry.samples(np.random.default_rng(0), entry)[k]


# ---- value and gradient tests ---------------------------------------------------------------
@pytest.mark.parametrize("entry,k", _cases())
def test_float64_vs_torch(entry, k):
    _run(entry, _sample(entry, k), np.float64, *entry.f64_tol)


@pytest.mark.parametrize("entry,k", _cases())
def test_float32_vs_torch(entry, k):
    _run(entry, _sample(entry, k), np.float32, *entry.f32_tol)


@pytest.mark.parametrize("entry,k", _cases(lambda e, s: e.differentiable and e.gradgrad))
def test_second_order_vs_torch(entry, k):
    _run(entry, _sample(entry, k), np.float64, *entry.f64_tol, second_order=True)


def _gradcheck_args(sample):
    args, _ = _inputs(sample, tg, np.float64)
    return args


@pytest.mark.parametrize("entry,k", _cases(lambda e, s: e.differentiable and s.gradcheck))
def test_gradcheck(entry, k):
    sample = _sample(entry, k)
    args = _gradcheck_args(sample)
    if not any(isinstance(a, tg.Tensor) and a.requires_grad for a in args):
        pytest.skip("no differentiable input")  # pragma: no cover
    with np.errstate(all="ignore"):
        assert tg.autograd.gradcheck(lambda *a: entry.tg_fn(*a, **sample.kwargs), args,
                                     **entry.gradcheck_kw)


@pytest.mark.parametrize("entry,k", _cases(
    lambda e, s: e.differentiable and e.gradgrad and s.gradcheck))
def test_gradgradcheck(entry, k):
    sample = _sample(entry, k)
    args = _gradcheck_args(sample)
    with np.errstate(all="ignore"):
        assert tg.autograd.gradgradcheck(lambda *a: entry.tg_fn(*a, **sample.kwargs), args,
                                         **entry.gradcheck_kw)


# ---- hypothesis: random shapes and values -------------------------------------------------------
@pytest.mark.parametrize("entry", [pytest.param(e, id=e.id) for e in OP_DB if e.hyp])
@settings(max_examples=15, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_hypothesis_vs_torch(entry, data):
    sample = entry.hyp(data.draw, entry)
    _run(entry, sample, np.float64, *entry.f64_tol)
    _run(entry, sample, np.float32, *entry.f32_tol)


# ---- coverage: every table op has an entry ----------------------------------------------------------
def _import_all_tapegrad_modules():
    """Import every tapegrad module, so that every `defop` has run."""
    failed = []
    for m in pkgutil.walk_packages(tg.__path__, "tapegrad."):
        if m.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(m.name)
        except (Exception, SystemExit) as e:  # noqa: BLE001 (other tests report it)
            failed.append((m.name, e))
    return failed


def test_every_table_op_has_an_entry():
    from tapegrad.ops.registry import OPS
    _import_all_tapegrad_modules()
    covered = covered_ops()
    missing = sorted(set(OPS) - covered - set(PENDING))
    assert not missing, (f"table ops with no op-database entry: {missing}. Add an entry to "
                         "tests/opdb/<family>.py (see the docstring of "
                         "tests/opdb/__init__.py)")
    stale = sorted(set(PENDING) & covered)
    assert not stale, f"remove from opdb.PENDING (they have entries now): {stale}"
    unknown = sorted({e.name for e in OP_DB} - set(OPS) - _composites())
    assert not unknown, f"entries naming neither a table op nor a public function: {unknown}"


def _composites():
    return {n for n in dir(tg) if callable(getattr(tg, n, None))} | {
        n for n in dir(tg.Tensor) if not n.startswith("_")}

