"""The in-place variants against torch (erf_, round_, cumprod_, nan_to_num_, square_,
clamp_min_, ... as methods and in the torch namespace): values, gradients through them
and version counters; integer tensors as torch treats them; a leaf that requires grad
refused; in-place shape changes (resize_, squeeze_, t_, ...) with their views.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _compare_exact import _same, _version


# ---- in-place variants ----------------------------------------------------------------------
_INPLACE = [
    ("erf_", (), {}), ("erfc_", (), {}), ("round_", (), {}), ("round_", (), {"decimals": 1}),
    ("nan_to_num_", (), {}), ("nan_to_num_", (1.0,), {"posinf": 7.0}), ("square_", (), {}),
    ("reciprocal_", (), {}), ("floor_", (), {}), ("ceil_", (), {}), ("trunc_", (), {}),
    ("fix_", (), {}), ("log1p_", (), {}), ("expm1_", (), {}), ("log2_", (), {}),
    ("log10_", (), {}), ("fmod_", (1.5,), {}), ("remainder_", (1.5,), {}),
    ("cumsum_", (1,), {}), ("cumprod_", (1,), {}),
    ("cumprod_", (0,), {}), ("tril_", (), {}), ("triu_", (1,), {}), ("clamp_min_", (0.5,), {}),
    ("clamp_max_", (0.5,), {}),
]


def _inplace_input(name):
    x = np.array([[0.3, 1.26, 2.5, 0.8], [1.5, 0.45, 3.0, 0.2], [2.2, 0.9, 0.05, 1.75]])
    if name == "nan_to_num_":
        x = x.copy()
        x[0, 1], x[1, 2], x[2, 0] = np.nan, np.inf, -np.inf
    return x


@pytest.mark.parametrize("name,args,kw", _INPLACE,
                         ids=[f"{n}{i}" for i, (n, _, _) in enumerate(_INPLACE)])
def test_inplace_variant_values_gradient_and_version(name, args, kw):
    res = {}
    for lib in (tg, torch):
        w = lib.tensor(_inplace_input(name), requires_grad=True)
        y = w * 1.0  # a non-leaf: in-place on it is recorded
        v0 = _version(y)
        r = getattr(y, name)(*args, **kw)
        assert r is y and _version(y) == v0 + 1
        (y * lib.arange(12.0, dtype=lib.float64).reshape(3, 4) / 100).sum().backward()
        res[lib] = (y, w.grad)
    _same(res[tg][0], res[torch][0])
    _same(res[tg][1], res[torch][1])


@pytest.mark.parametrize("name", ["erf_", "round_", "nan_to_num_", "square_", "clamp_min_",
                                  "clamp_max_", "sigmoid_", "exp_", "floor_", "reciprocal_",
                                  "fix_", "clip_", "zero_"])
def test_torch_namespace_inplace_functions(name):
    args = {"clamp_min_": (0.5,), "clamp_max_": (0.5,), "clip_": (0.1, 0.9)}.get(name, ())
    res = {}
    for lib in (tg, torch):
        x = lib.tensor([0.25, 1.5, -0.75, 2.5])
        r = getattr(lib, name)(x, *args)
        assert r is x
        res[lib] = x
    _same(res[tg], res[torch], rtol=1e-6)  # float32


def test_inplace_on_integer_tensors_follows_torch():
    for name, args in [("square_", ()), ("floor_divide_", (2,)), ("remainder_", (3,)),
                       ("cumsum_", (0,)), ("tril_", ()), ("round_", ())]:
        res = {}
        for lib in (tg, torch):
            x = lib.tensor([[7, -7], [3, 4]])
            getattr(x, name)(*args)
            res[lib] = x
        _same(res[tg], res[torch])
    for name in ["erf_", "reciprocal_", "log1p_"]:
        with pytest.raises(RuntimeError) as e_th:
            getattr(torch.tensor([1, 2]), name)()
        with pytest.raises(RuntimeError) as e_tg:
            getattr(tg.tensor([1, 2]), name)()
        assert str(e_tg.value) == str(e_th.value)


def test_inplace_on_a_leaf_requiring_grad_is_refused():
    x = tg.tensor([0.5, 1.5], requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        x.erf_()
    with tg.no_grad():
        x.round_()
    assert x.tolist() == [0.0, 2.0]


# ---- t_ / transpose_ / squeeze_ / unsqueeze_ ------------------------------------------------
def test_inplace_shape_changes_values_gradients_and_views():
    res = {}
    for lib in (tg, torch):
        x = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        y = x * 2
        v0 = _version(y)
        assert y.t_() is y and tuple(y.shape) == (3, 2) and _version(y) == v0 + 1
        y.unsqueeze_(0)
        shapes = [tuple(y.shape)]
        y.squeeze_()
        y.transpose_(0, 1)
        shapes.append(tuple(y.shape))
        (y * lib.arange(6.0, dtype=lib.float64).view(2, 3)).sum().backward()
        b = lib.zeros(2, 3, dtype=lib.float64) * x.sum()  # an in-place change through a view
        r = b[0]
        r.unsqueeze_(0)
        r.add_(1)
        with lib.no_grad():
            z = lib.ones(2, 3)
            z.t_()
        res[lib] = (shapes, y, x.grad, b, tuple(z.shape))
    assert res[tg][0] == res[torch][0] and res[tg][4] == res[torch][4]
    for a, b in zip(res[tg][1:4], res[torch][1:4]):
        _same(a, b)
    with pytest.raises(RuntimeError, match="leaf Variable"):
        tg.ones(2, 3, requires_grad=True).t_()
