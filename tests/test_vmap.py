"""tg.func.vmap against torch.func.vmap: in_dims/out_dims (pytrees, None, negative),
composition with grad/jacrev/jvp in both orders, randomness modes, and the error cases."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_close

RNG = np.random.default_rng(7)


def _arr(*shape):
    return RNG.standard_normal(shape)


def _both(fn, *arrays):
    """fn(lib, *tensors) run with tapegrad and with torch on the same float64 arrays."""
    return (fn(tg, *[tg.tensor(a) for a in arrays]),
            fn(torch, *[torch.tensor(a) for a in arrays]))


def _close_tree(a, b, rtol=1e-10, atol=1e-12):
    if isinstance(b, dict):
        assert isinstance(a, dict) and list(a) == list(b)
        for k in b:
            _close_tree(a[k], b[k], rtol, atol)
    elif isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for x, y in zip(a, b):
            _close_tree(x, y, rtol, atol)
    else:
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b, rtol=rtol, atol=atol)


A, B, W = _arr(5, 3), _arr(3, 5), _arr(3, 4)

CASES = {
    "dim0": (lambda T, a, b, w: T.func.vmap(lambda x: (x.sin() * x).sum())(a), (A, B, W)),
    "in_dims (0, None)": (lambda T, a, b, w: T.func.vmap(lambda x, m: x @ m,
                                                          in_dims=(0, None))(a, w), (A, B, W)),
    "in_dims (0, 1)": (lambda T, a, b, w: T.func.vmap(lambda x, y: (x * y).tanh(),
                                                       in_dims=(0, 1))(a, b), (A, B, W)),
    "negative in_dim": (lambda T, a, b, w: T.func.vmap(lambda y: y.exp() * y.sum(),
                                                        in_dims=-1)(b), (A, B, W)),
    "out_dims 1": (lambda T, a, b, w: T.func.vmap(lambda x: x[:, None] * x[None, :],
                                                   out_dims=1)(a), (A, B, W)),
    "out_dims tuple": (lambda T, a, b, w: T.func.vmap(lambda x: (x * 2, x.sum()),
                                                       out_dims=(1, 0))(a), (A, B, W)),
    "dict input, dict in_dims": (
        lambda T, a, b, w: T.func.vmap(lambda d: d["x"] @ d["m"],
                                       in_dims=({"x": 0, "m": None},))({"x": a, "m": w}),
        (A, B, W)),
    "nested tuple input": (
        lambda T, a, b, w: T.func.vmap(lambda p: p[0] * p[1][0].sum(),
                                       in_dims=((0, [1]),))((a, [b])), (A, B, W)),
    "dict output": (lambda T, a, b, w: T.func.vmap(lambda x: {"s": x.sum(), "m": x.max()})(a),
                    (A, B, W)),
    "kwargs are not mapped": (
        lambda T, a, b, w: T.func.vmap(lambda x, scale=None: x * scale)(a, scale=a[0]),
        (A, B, W)),
    "out_dims None for an unbatched output": (
        lambda T, a, b, w: T.func.vmap(lambda x, m: (x @ m, m * 2), in_dims=(0, None),
                                       out_dims=(0, None))(a, w), (A, B, W)),
    "nested vmap (outer product)": (
        lambda T, a, b, w: T.func.vmap(T.func.vmap(lambda x, y: x * y, in_dims=(None, 0)),
                                       in_dims=(0, None))(a[:, 0], b[0]), (A, B, W)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_vmap_matches_torch(name):
    fn, arrays = CASES[name]
    ours, theirs = _both(fn, *arrays)
    _close_tree(ours, theirs)


def test_vmap_float32():
    a, w = A.astype(np.float32), W.astype(np.float32)
    f = lambda T, x, m: T.func.vmap(lambda r, mm: (r @ mm).softmax(-1), in_dims=(0, None))(x, m)
    _close_tree(f(tg, tg.tensor(a), tg.tensor(w)), f(torch, torch.tensor(a), torch.tensor(w)),
                rtol=1e-5, atol=1e-6)


def test_empty_batch_keeps_output_shape():
    out = tg.func.vmap(lambda x: x @ tg.tensor(W))(tg.tensor(np.zeros((0, 3))))
    tout = torch.func.vmap(lambda x: x @ torch.tensor(W))(torch.zeros(0, 3, dtype=torch.float64))
    assert tuple(out.shape) == tuple(tout.shape) == (0, 4)


# ---- composition with the other transforms -------------------------------------------------
def test_grad_through_vmap():
    def f(T, w, xs):
        return T.func.grad(lambda ww: T.func.vmap(lambda x, v: (x @ v).tanh().sum(),
                                                  in_dims=(0, None))(xs, ww).pow(2).sum())(w)
    ours, theirs = _both(f, W, A)
    _close_tree(ours, theirs)


def test_backward_through_vmap():
    w, xs = tg.tensor(W, requires_grad=True), tg.tensor(A, requires_grad=True)
    tw, txs = torch.tensor(W, requires_grad=True), torch.tensor(A, requires_grad=True)
    tg.func.vmap(lambda x, v: (x @ v).sin(), in_dims=(0, None))(xs, w).sum().backward()
    torch.func.vmap(lambda x, v: (x @ v).sin(), in_dims=(0, None))(txs, tw).sum().backward()
    assert_close(w.grad, tw.grad)
    assert_close(xs.grad, txs.grad)


def test_vmap_of_grad_per_sample():
    def f(T, w, xs, ys):
        loss = lambda v, x, y: ((x @ v).tanh() - y).pow(2).sum()  # noqa: E731
        return T.func.vmap(T.func.grad(loss), in_dims=(None, 0, 0))(w, xs, ys)
    ys = _arr(5, 4)
    ours, theirs = _both(f, W, A, ys)
    _close_tree(ours, theirs)
    assert tuple(ours.shape) == (5, 3, 4)


def test_vmap_of_jacrev_and_jvp():
    f = lambda T, x: (x.sin() * x.sum()).exp()  # noqa: E731
    ours, theirs = _both(lambda T, xs: T.func.vmap(T.func.jacrev(lambda x: f(T, x)))(xs), A)
    _close_tree(ours, theirs)
    ours, theirs = _both(lambda T, xs, vs: T.func.vmap(
        lambda x, v: T.func.jvp(lambda y: f(T, y), (x,), (v,)))(xs, vs), A, A * 0.5)
    _close_tree(ours, theirs)


def test_jvp_of_vmap_and_vmap_of_hessian():
    f = lambda x: (x.sin() * x.sum()).exp()  # noqa: E731
    ours, theirs = _both(lambda T, xs, vs: T.func.jvp(T.func.vmap(f), (xs,), (vs,)), A, A * 0.3)
    _close_tree(ours, theirs)
    ours, theirs = _both(lambda T, xs: T.func.vmap(T.func.hessian(lambda x: f(x).sum()))(xs), A)
    _close_tree(ours, theirs)


def test_jacrev_of_vmap():
    ours, theirs = _both(lambda T, w, xs: T.func.jacrev(
        lambda v: T.func.vmap(lambda x: (x @ v).sigmoid(), in_dims=0)(xs))(w), W, A[:2])
    _close_tree(ours, theirs)


# ---- randomness ------------------------------------------------------------------------------
def test_randomness_error_is_the_default():
    x = tg.tensor(A)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        tg.func.vmap(lambda r: r + tg.rand(3))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        tg.func.vmap(lambda r: tg.nn.functional.dropout(r, 0.5, training=True))(x)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        torch.func.vmap(lambda r: r + torch.rand(3))(torch.tensor(A))
    assert tg.rand(2).shape == (2,)  # the generator is back after the error


def test_randomness_same_and_different():
    x = tg.tensor(np.zeros((4, 3)))
    same = tg.func.vmap(lambda r: r + tg.rand(3), randomness="same")(x)
    assert np.all(same.numpy(force=True) == same.numpy(force=True)[0])
    diff = tg.func.vmap(lambda r: r + tg.rand(3), randomness="different")(x)
    assert len({tuple(row) for row in diff.numpy(force=True)}) == 4
    # a torch.func program's dropout per sample
    out = tg.func.vmap(lambda r: tg.nn.functional.dropout(r + 1, 0.5, training=True),
                       randomness="different")(x)
    assert set(np.unique(out.numpy(force=True))) <= {0.0, 2.0}


# ---- errors (torch's types and messages) ---------------------------------------------------
X, Y = np.ones((3, 4)), np.ones((4, 4))
ERRORS = [
    ("mismatched batch sizes", lambda T, x, y: T.func.vmap(T.add)(x, y),
     "Expected all tensors to have the same size in the mapped dimension, got sizes [3, 4]"),
    ("in_dim out of range", lambda T, x, y: T.func.vmap(T.add, in_dims=(2, 0))(x, y),
     "Got in_dim=2 for some input, but that input is a Tensor of dimensionality 2 so "
     "expected in_dim to satisfy -2 <= in_dim < 2."),
    ("in_dims structure", lambda T, x, y: T.func.vmap(T.add, in_dims=(0,))(x, y),
     "in_dims is not compatible with the structure of `inputs`"),
    ("tuple in_dims for a list input", lambda T, x, y: T.func.vmap(
        lambda p: p[0] * p[1][0], in_dims=((0, (0,)),))((x, [x])),
     "in_dims is not compatible with the structure of `inputs`"),
    ("nothing mapped", lambda T, x, y: T.func.vmap(T.add, in_dims=(None, None))(x, y),
     "vmap: Expected at least one Tensor to vmap over"),
    ("bad in_dims type", lambda T, x, y: T.func.vmap(T.add, in_dims=1.0)(x, y),
     "expected `in_dims` to be int or a (potentially nested) tuple matching the structure "
     "of inputs, got: <class 'float'>."),
    ("list in_dims", lambda T, x, y: T.func.vmap(T.add, in_dims=[0, 0])(x, y),
     "expected `in_dims` to be int or a (potentially nested) tuple"),
    ("mapping a float", lambda T, x, y: T.func.vmap(lambda a, b: a * b)(x, 2.0),
     "Got in_dim=0 for an input but the input is of type <class 'float'>. We cannot vmap "
     "over non-Tensor arguments, please use None as the respective in_dim"),
    ("non-tensor output", lambda T, x, y: T.func.vmap(lambda a: (a, 1))(x),
     "must only return Tensors, got type <class 'int'>. Did you mean to set out_dims= to "
     "None for output?"),
    ("batched output with out_dims None", lambda T, x, y: T.func.vmap(
        lambda a: a * T.arange(4.0), out_dims=None)(x * T.arange(3.0)[:, None]),
     "can not return a BatchedTensor when out_dim is None"),
    ("out_dims structure", lambda T, x, y: T.func.vmap(T.sin, out_dims=(0, 0))(x),
     "out_dims is not compatible with the structure of `outputs`"),
    ("no inputs", lambda T, x, y: T.func.vmap(lambda: x)(),
     "got no inputs. Maybe you forgot to add inputs"),
    ("0-dim input", lambda T, x, y: T.func.vmap(T.sin)(x.sum()),
     "Got in_dim=0 for some input, but that input is a Tensor of dimensionality 0"),
]


@pytest.mark.parametrize("name,fn,msg", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, fn, msg):
    with pytest.raises(ValueError) as theirs:
        fn(torch, torch.tensor(X), torch.tensor(Y))
    with pytest.raises(ValueError) as ours:
        fn(tg, tg.tensor(X), tg.tensor(Y))
    assert msg in str(theirs.value)  # the message is torch's ...
    assert msg in str(ours.value)    # ... and ours


def test_bad_randomness_and_chunk_size():
    for T in (tg, torch):
        with pytest.raises(RuntimeError, match="Only allowed values for randomness are "
                                               "'error', 'different', or 'same'. Got bad"):
            T.func.vmap(T.sin, randomness="bad")(T.tensor(X))
        with pytest.raises(ValueError, match=r"chunk_size should be None or greater than 0. "
                                             r"\(got 0\)"):
            T.func.vmap(T.sin, chunk_size=0)(T.tensor(X))
    out = tg.func.vmap(tg.sin, chunk_size=2)(tg.tensor(A))  # accepted: results unchanged
    assert_close(out, np.sin(A))


def test_top_level_alias():
    assert tg.vmap is tg.func.vmap and torch.vmap is torch.func.vmap
