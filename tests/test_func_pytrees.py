"""Pytrees (dicts, tuples, lists, namedtuples of tensors) in every tg.func transform,
against torch.func on the same functions (float64): structure and values."""
from collections import namedtuple

import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_close

RNG = np.random.default_rng(11)
WA, BA, XA = RNG.standard_normal((3, 4)), RNG.standard_normal(4), RNG.standard_normal((2, 3))
Pair = namedtuple("Pair", ["w", "b"])


def _close_tree(a, b):
    if isinstance(b, dict):
        assert isinstance(a, dict) and list(a) == list(b), (a, b)
        for k in b:
            _close_tree(a[k], b[k])
    elif isinstance(b, (tuple, list)):
        assert type(a).__name__ == type(b).__name__ and len(a) == len(b), (type(a), type(b))
        for x, y in zip(a, b):
            _close_tree(x, y)
    elif isinstance(b, torch.Tensor):
        assert tuple(a.shape) == tuple(b.shape)
        assert_close(a, b)
    else:
        assert a == b


def _lib(T):
    """The same inputs as tensors of library T."""
    return T.tensor(WA), T.tensor(BA), T.tensor(XA)


def _model(p, x):
    return ((x @ p["w"] + p["b"]).tanh() ** 2).sum()


# each case: fn(T) -> the result of a transform; compared between tapegrad and torch
CASES = {
    "grad of a dict": lambda T: T.func.grad(_model)(dict(zip("wb", _lib(T)[:2])), _lib(T)[2]),
    "grad of a nested tuple/list": lambda T: T.func.grad(
        lambda p, x: ((x @ p[0] + p[1][0]).sin()).sum())((_lib(T)[0], [_lib(T)[1]]), _lib(T)[2]),
    "grad of a namedtuple": lambda T: T.func.grad(
        lambda p, x: ((x @ p.w) * p.b).exp().sum())(Pair(*_lib(T)[:2]), _lib(T)[2]),
    "grad argnums tuple of pytrees": lambda T: T.func.grad(_model, argnums=(0, 1))(
        dict(zip("wb", _lib(T)[:2])), _lib(T)[2]),
    "grad negative argnum": lambda T: T.func.grad(_model, argnums=-1)(
        dict(zip("wb", _lib(T)[:2])), _lib(T)[2]),
    "grad has_aux pytree aux": lambda T: T.func.grad(
        lambda p, x: (_model(p, x), {"out": x @ p["w"], "n": [x.sum()]}), has_aux=True)(
        dict(zip("wb", _lib(T)[:2])), _lib(T)[2]),
    "grad_and_value dict": lambda T: T.func.grad_and_value(_model)(
        dict(zip("wb", _lib(T)[:2])), _lib(T)[2]),
    "grad_and_value has_aux": lambda T: T.func.grad_and_value(
        lambda p: (p["w"].sin().sum(), p["w"].cos()), has_aux=True)({"w": _lib(T)[0]}),
    "jvp dict in, dict out": lambda T: T.func.jvp(
        lambda p: {"y": (_lib(T)[2] @ p["w"]).sin(), "s": p["b"].exp().sum()},
        (dict(zip("wb", _lib(T)[:2])),),
        ({"w": _lib(T)[0] * 0.5, "b": _lib(T)[1] - 1},)),
    "jvp has_aux": lambda T: T.func.jvp(lambda x: (x.exp(), {"twice": x * 2}),
                                        (_lib(T)[1],), (_lib(T)[1].cos(),), has_aux=True),
    "jacrev dict in, tuple out": lambda T: T.func.jacrev(
        lambda p: ((_lib(T)[2] @ p["w"]).tanh(), p["b"].sum() * p["w"][0, 0]))(
        dict(zip("wb", _lib(T)[:2]))),
    "jacfwd dict in, tuple out": lambda T: T.func.jacfwd(
        lambda p: ((_lib(T)[2] @ p["w"]).tanh(), p["b"].sum() * p["w"][0, 0]))(
        dict(zip("wb", _lib(T)[:2]))),
    "jacrev argnums tuple, dict out": lambda T: T.func.jacrev(
        lambda w, b: {"a": w.sum(0) * b, "c": (w * w).sum()}, argnums=(0, 1))(*_lib(T)[:2]),
    "jacfwd argnums tuple, dict out": lambda T: T.func.jacfwd(
        lambda w, b: {"a": w.sum(0) * b, "c": (w * w).sum()}, argnums=(0, 1))(*_lib(T)[:2]),
    "jacrev has_aux": lambda T: T.func.jacrev(lambda b: (b.sin(), {"s": b.sum()}),
                                              has_aux=True)(_lib(T)[1]),
    "jacfwd has_aux": lambda T: T.func.jacfwd(lambda b: (b.sin(), {"s": b.sum()}),
                                              has_aux=True)(_lib(T)[1]),
    "hessian of a dict": lambda T: T.func.hessian(_model)(dict(zip("wb", _lib(T)[:2])),
                                                          _lib(T)[2]),
    "hessian argnums tuple": lambda T: T.func.hessian(
        lambda w, b: ((w.sum(0) * b).sin()).sum(), argnums=(0, 1))(*_lib(T)[:2]),
    "jacrev of jacfwd of a dict": lambda T: T.func.jacrev(T.func.jacfwd(
        lambda p: (p["w"] * p["b"]).sin().sum(0)))(dict(zip("wb", _lib(T)[:2]))),
    "jacfwd of jacfwd of a tuple": lambda T: T.func.jacfwd(T.func.jacfwd(
        lambda p: (p[0][0] * p[1]).exp()))((_lib(T)[0], _lib(T)[1])),
    "grad of grad of a dict": lambda T: T.func.grad(
        lambda p: T.func.grad(lambda q: (q["b"] ** 3).sum())(p)["b"].sin().sum())(
        {"b": _lib(T)[1]}),
    "vmap of grad of a dict": lambda T: T.func.vmap(T.func.grad(_model), in_dims=(None, 0))(
        dict(zip("wb", _lib(T)[:2])), _lib(T)[2][:, None, :]),
    "jvp of grad (forward over reverse), dict": lambda T: T.func.jvp(
        T.func.grad(lambda p: (p["w"].sin() * p["w"]).sum()), ({"w": _lib(T)[0]},),
        ({"w": _lib(T)[0].cos()},)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_pytree_transforms_match_torch(name):
    _close_tree(CASES[name](tg), CASES[name](torch))


def test_vjp_pytrees():
    def f(p):
        return {"y": (p["w"] * 2).sin(), "s": p["b"].sum()}, p["w"].sum()

    res = []
    for T in (tg, torch):
        w, b, _ = _lib(T)
        out, fn = T.func.vjp(f, {"w": w, "b": b})
        cts = ({"y": T.ones_like(w) * 0.5, "s": T.tensor(2.0, dtype=T.float64)},
               T.tensor(-1.0, dtype=T.float64))
        res.append((out, fn(cts)))
    _close_tree(*res)
    # a cotangent tree of the wrong structure: torch's error
    for T in (tg, torch):
        w, b, _ = _lib(T)
        _, fn = T.func.vjp(lambda p: {"o": p["w"] * 2, "p": p["w"].sum()}, {"w": w})
        with pytest.raises(RuntimeError, match="Expected pytree structure of cotangents to be "
                                               "the same as pytree structure of outputs"):
            fn({"o": w})


def test_results_are_detached_at_the_top_level_and_live_when_nested():
    w = tg.tensor(WA, requires_grad=True)
    g = tg.func.grad(lambda p: (p["w"] ** 3).sum())({"w": w})
    assert g["w"].requires_grad  # w is being differentiated by ordinary autograd ...
    g["w"].sum().backward()      # ... so the gradient is differentiable, as in torch
    tw = torch.tensor(WA, requires_grad=True)
    torch.func.grad(lambda p: (p["w"] ** 3).sum())({"w": tw})["w"].sum().backward()
    assert_close(w.grad, tw.grad)
    g = tg.func.grad(lambda p: (p["w"] ** 3).sum())({"w": tg.tensor(WA)})
    assert not g["w"].requires_grad


ERRORS = [
    ("non-tensor leaf", ValueError, "Thing passed to transform API must be Tensor, got "
     "<class 'float'>", lambda T, w: T.func.grad(lambda d: (d["w"] * d["b"]).sum())(
         {"w": w, "b": 2.0})),
    ("argnum out of range", RuntimeError, "Got argnum=2, but only 2 positional inputs",
     lambda T, w: T.func.grad(lambda x, y: (x * y).sum(), argnums=2)(w, w)),
    ("empty argnums", RuntimeError, "argnums must be non-empty",
     lambda T, w: T.func.grad(lambda x, y: (x * y).sum(), argnums=())(w, w)),
    ("float argnums", RuntimeError, "argnums must be int or Tuple[int, ...], got: "
     "<class 'float'>", lambda T, w: T.func.grad(lambda x: x.sum(), argnums=1.0)(w)),
    ("non-scalar output", RuntimeError, "grad_and_value(f)(*args): Expected f(*args) to "
     "return a scalar Tensor, got tensor with 2 dims. Maybe you wanted to use the vjp or "
     "jacrev APIs instead?", lambda T, w: T.func.grad(lambda x: x * 2)(w)),
    ("has_aux without a pair", RuntimeError, "grad_and_value(f)(*args): output of function f "
     "should be a tuple: (output, aux) if has_aux is True",
     lambda T, w: T.func.grad(lambda x: x.sum(), has_aux=True)(w)),
    ("jvp structure mismatch", RuntimeError, "jvp(f, primals, tangents): Expected primals "
     "and tangents to have the same python structure",
     lambda T, w: T.func.jvp(lambda d: d["w"] * 2, ({"w": w},), ({"v": w},))),
    ("jvp primals not a tuple", RuntimeError, "jvp(f, primals, tangents): Expected primals to "
     "be a tuple. E.g. it should be valid to call f(*primals).",
     lambda T, w: T.func.jvp(lambda d: d["w"] * 2, {"w": w}, ({"w": w},))),
    ("integer input", RuntimeError, "only Tensors of floating point dtype can require "
     "gradients", lambda T, w: T.func.grad(lambda x: x.sum())(T.arange(3))),
    ("jacrev non-tensor output", RuntimeError, "expected f(*primals) to return only tensors, "
     "got unsupported type <class 'int'>", lambda T, w: T.func.jacrev(lambda x: 2)(w)),
]


@pytest.mark.parametrize("name,exc,msg,fn", ERRORS, ids=[e[0] for e in ERRORS])
def test_errors_match_torch(name, exc, msg, fn):
    for T in (torch, tg):
        with pytest.raises(exc) as ei:
            fn(T, T.tensor(WA))
        assert msg in str(ei.value), (T.__name__, str(ei.value))


def test_jacfwd_randomness_and_jacrev_chunk_size_as_torch():
    for T in (tg, torch):
        x = T.ones(2, dtype=T.float64)
        with pytest.raises(RuntimeError, match="randomness error mode"):
            T.func.jacfwd(lambda v: v + T.rand(2, dtype=T.float64))(x)
        with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
            T.func.jacfwd(T.sin, randomness="x")(x)
        with pytest.raises(ValueError, match="jacrev: `chunk_size` should be greater than 0."):
            T.func.jacrev(T.sin, chunk_size=0)(x)
        # reverse mode runs func once, outside any vmap: random draws are fine there
        assert_close(T.func.jacrev(lambda v: v + T.rand(2, dtype=T.float64))(x), np.eye(2))
        assert_close(T.func.jacfwd(lambda v: v + T.rand(2, dtype=T.float64),
                                   randomness="same")(x), np.eye(2))
