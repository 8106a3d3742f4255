"""Legacy constructors (`Tensor([1, 2])`, `Tensor(2, 3)`, FloatTensor/LongTensor/...,
`autograd.Variable`) and NumPy's keyword names (`keepdims`, `axis`) on the reductions,
against torch; the makemore-style snippets that used to fail at their first reduction."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_close, to_numpy


def _same_tensor(a, b):
    assert str(a.dtype) == str(b.dtype).replace("torch.", "tapegrad.")
    assert tuple(a.shape) == tuple(b.shape)
    if b.numel():
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


@pytest.mark.parametrize("args", [
    ([1, 2],), ([[1.5, 2], [3, 4]],), ([True, False],), ((2, 3),), (), (3,), (2, 3),
    (np.int64(2), 2), ([],)])
def test_tensor_legacy_constructor(args):
    a, b = tg.Tensor(*args), torch.Tensor(*args)
    if args and isinstance(args[0], (list, tuple)):
        _same_tensor(a, b)
    else:  # sizes: torch leaves the values uninitialised
        assert str(a.dtype) == str(b.dtype).replace("torch.", "tapegrad.")
        assert tuple(a.shape) == tuple(b.shape)
    assert not a.requires_grad and a.is_leaf


def test_tensor_legacy_from_size_tensor_and_default_dtype():
    assert tuple(tg.Tensor(tg.Size([2, 3])).shape) == tuple(torch.Tensor(torch.Size([2, 3])).shape)
    t = tg.tensor([1.0, 2.0])
    u = tg.Tensor(t)
    assert u.numpy(force=True) is t.numpy(force=True)  # shares storage, as torch's Tensor(t)
    assert tg.Tensor(tg.tensor([1, 2])).dtype == tg.int64  # torch keeps int64 too
    try:
        torch.set_default_dtype(torch.float64)
        tg.set_default_dtype(tg.float64)
        _same_tensor(tg.Tensor([1, 2]), torch.Tensor([1, 2]))
        _same_tensor(tg.FloatTensor([1, 2]), torch.FloatTensor([1, 2]))
    finally:
        torch.set_default_dtype(torch.float32)
        tg.set_default_dtype(tg.float32)


@pytest.mark.parametrize("bad", [(2.5,), (2, 3.0), (-1,)])
def test_tensor_legacy_constructor_errors(bad):
    with pytest.raises(Exception) as theirs:
        torch.Tensor(*bad)
    with pytest.raises(type(theirs.value)):
        tg.Tensor(*bad)


@pytest.mark.parametrize("name", ["FloatTensor", "DoubleTensor", "HalfTensor", "ByteTensor",
                                  "CharTensor", "ShortTensor", "IntTensor", "LongTensor",
                                  "BoolTensor"])
def test_typed_legacy_constructors(name):
    T, TT = getattr(tg, name), getattr(torch, name)
    for args in [([1, 0, 3],), ([[1.7, 2], [0, 4]],), (2, 3), ()]:
        a, b = T(*args), TT(*args)
        assert str(a.dtype) == str(b.dtype).replace("torch.", "tapegrad.")
        assert tuple(a.shape) == tuple(b.shape)
        if args and isinstance(args[0], list):
            np.testing.assert_array_equal(to_numpy(a), to_numpy(b))
        assert isinstance(a, T) and isinstance(b, TT) and isinstance(a, tg.Tensor)
        assert type(a) is tg.Tensor
    other = "LongTensor" if name != "LongTensor" else "FloatTensor"
    assert not isinstance(T([1]), getattr(tg, other))
    assert T([1]).type() == f"tapegrad.{name}" and TT([1]).type() == f"torch.{name}"
    x = tg.tensor([1.6, -2.0])
    assert x.type(T).dtype == T.dtype and x.type(f"torch.{name}").dtype == T.dtype


def test_typed_constructor_refuses_a_tensor_of_another_dtype():
    with pytest.raises(TypeError):
        torch.FloatTensor(torch.tensor([1, 2]))
    with pytest.raises(TypeError, match="float32"):
        tg.FloatTensor(tg.tensor([1, 2]))


def test_variable():
    from tapegrad.autograd import Variable
    from torch.autograd import Variable as TV
    a, b = tg.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    x, y = Variable(a, requires_grad=True), TV(b, requires_grad=True)
    assert repr(x) == repr(y) and x is not a and x.numpy(force=True) is a.numpy(force=True)
    assert isinstance(a, Variable) and isinstance(x, tg.Tensor)
    (x * x).sum().backward()
    (y * y).sum().backward()
    assert_close(x.grad, y.grad)
    v, w = Variable(x * 2), TV(y * 2)
    assert (v.requires_grad, v.grad_fn) == (w.requires_grad, w.grad_fn) == (False, None)
    assert Variable(tg.tensor([1, 2])).dtype == tg.int64
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got list"):
        Variable([1, 2])


# ---- keepdims / axis ---------------------------------------------------------------------
X = np.linspace(-2, 3, 24).reshape(2, 3, 4)

CALLS = {
    "sum": lambda t: t.sum(1, keepdims=True), "sum_axis": lambda t: t.sum(axis=(0, 2)),
    "sum_both": lambda t: t.sum(axis=-1, keepdims=True),
    "mean": lambda t: t.mean(1, keepdims=True), "mean_fn": lambda L, t: L.mean(t, axis=0),
    "prod": lambda t: t.prod(2, keepdims=True), "amax": lambda t: t.amax(1, keepdims=True),
    "amin": lambda t: t.amin(axis=(1, 2), keepdims=True),
    "max": lambda t: t.max(1, keepdims=True)[0], "max_axis": lambda t: t.max(axis=2).values,
    "min": lambda t: t.min(axis=0, keepdims=True)[0],
    "var": lambda t: t.var(1, keepdims=True), "std": lambda t: t.std(axis=2, keepdims=True),
    "var_corr": lambda t: t.var(axis=1, keepdims=True, correction=0),
    "logsumexp": lambda t: t.logsumexp(1, keepdims=True),
    "argmax": lambda t: t.argmax(1, keepdims=True), "argmin": lambda t: t.argmin(axis=2),
    "softmax": lambda t: t.softmax(axis=1), "log_softmax": lambda t: t.log_softmax(axis=-1),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_numpy_keyword_names_on_reductions(name):
    f = CALLS[name]
    a = tg.tensor(X, requires_grad=True)
    b = torch.tensor(X, requires_grad=True)
    if f.__code__.co_argcount == 2:
        ra, rb = f(tg, a), f(torch, b)
    else:
        ra, rb = f(a), f(b)
    assert tuple(ra.shape) == tuple(rb.shape)
    assert_close(ra, rb)
    if rb.requires_grad:
        ra.sum().backward()
        rb.sum().backward()
        assert_close(a.grad, b.grad)


@pytest.mark.parametrize("call", [lambda t: t.sum(1, keepdim=True, keepdims=True),
                                  lambda t: t.sum(dim=1, axis=1),
                                  lambda t: t.max(dim=1, axis=1)])
def test_both_names_at_once_are_refused_like_torch(call):
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        call(torch.tensor(X))
    with pytest.raises(TypeError, match="unexpected keyword argument"):
        call(tg.tensor(X))


def _makemore_counts(torch):
    """Bigram counts normalised as in makemore part 1 (`P /= P.sum(1, keepdims=True)`)."""
    words = ["emma", "olivia", "ava", "isabella", "sophia"]
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    n = len(stoi)
    N = torch.zeros((n, n), dtype=torch.int32)
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            N[stoi[ch1], stoi[ch2]] += 1
    P = (N + 1).float()
    P /= P.sum(1, keepdims=True)
    log_likelihood = 0.0
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            log_likelihood += torch.log(P[stoi[ch1], stoi[ch2]])
    nll = -log_likelihood
    return P, f"{log_likelihood=}".split("=")[0], f"{nll:.4f}", f"{nll / 30}"


def test_makemore_part1_normalisation_runs_unchanged():
    ours, theirs = _makemore_counts(tg), _makemore_counts(torch)
    assert_close(ours[0], theirs[0], rtol=1e-6, atol=1e-7)
    assert ours[1:3] == theirs[1:3]
    assert ours[3] == theirs[3]
