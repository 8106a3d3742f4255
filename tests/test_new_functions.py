"""torch functions added with their PyTorch names: all/any, clamp_min/clamp_max and the
new_* constructors (the differentiable ops are in the op database, tests/opdb.py)."""
import numpy as np
import pytest
import torch

import tapegrad as tg

RNG = np.random.default_rng(5)
A = RNG.standard_normal((3, 4))


@pytest.mark.parametrize("name", ["all", "any"])
@pytest.mark.parametrize("kw", [{}, {"dim": 0}, {"dim": 1, "keepdim": True}, {"dim": -1}])
def test_all_any_match_torch(name, kw):
    for arr in (A > 0, A > -5, np.zeros((3, 4), bool), (A > 0).astype(np.int64)):
        ours = getattr(tg.tensor(arr), name)(**kw)
        ref = getattr(torch.tensor(arr), name)(**kw)
        assert ours.dtype == np.bool_ and tuple(ours.shape) == tuple(ref.shape)
        np.testing.assert_array_equal(ours.numpy(), ref.numpy())
        np.testing.assert_array_equal(getattr(tg, name)(tg.tensor(arr), **kw).numpy(),
                                      ref.numpy())


def test_all_any_bad_dim():
    with pytest.raises(IndexError):
        tg.tensor(A).all(dim=2)


def test_clamp_min_max_values_and_grads_match_torch():
    outs = []
    for L in (tg, torch):
        x = L.tensor(A, requires_grad=True)
        y = x.clamp_min(-0.3) * 2 + L.clamp_max(x, 0.4) * 3
        y.sum().backward()
        outs.append((y.detach().numpy(), x.grad.numpy()))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64"])
def test_new_constructors_match_torch(dtype):
    base = np.arange(6).reshape(2, 3).astype(dtype)
    t, r = tg.tensor(base), torch.tensor(base)
    for name, args, kw in [("new_zeros", (2, 3), {}), ("new_ones", ((4,),), {}),
                           ("new_full", ((2, 2), 7), {}), ("new_zeros", (3,), {"dtype": "float64"}),
                           ("new_tensor", ([1, 2, 3],), {}), ("new_empty", (2, 5), {})]:
        tkw = {k: getattr(torch, v) for k, v in kw.items()}
        ours = getattr(t, name)(*args, **{k: getattr(tg, v) for k, v in kw.items()})
        ref = getattr(r, name)(*args, **tkw)
        assert str(ours.dtype) == str(ref.dtype).replace("torch.", "tapegrad.")
        assert tuple(ours.shape) == tuple(ref.shape)
        if name != "new_empty":
            np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_new_tensor_is_a_copy_without_history():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = x.new_tensor(x)
    assert not y.requires_grad and y.grad_fn is None
    y.data[0] = 5.0
    assert x.data[0] == 1.0
    z = x.new_zeros(2, requires_grad=True)
    assert z.requires_grad and z.is_leaf


def test_makemore_style_counts_with_new_zeros():
    # the bigram counts of makemore part 1, with new_zeros instead of torch.zeros
    words = ["emma", "olivia", "ava"]
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    res = []
    for L in (tg, torch):
        N = L.tensor([0]).new_zeros((len(stoi), len(stoi)))
        for w in words:
            cs = ["."] + list(w) + ["."]
            for a, b in zip(cs, cs[1:]):
                N[stoi[a], stoi[b]] += 1
        P = (N + 1).float()
        P /= P.sum(1, keepdims=True)
        res.append(P.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-6)


@pytest.mark.parametrize("a,b", [(A * 3, 0.7), (A * 3, A[::-1] + 2.0),
                                 (np.arange(-5, 7).reshape(3, 4), 3)])
def test_floor_divide_and_operator_match_torch(a, b):
    tb = torch.tensor(b) if isinstance(b, np.ndarray) else b
    gb = tg.tensor(b) if isinstance(b, np.ndarray) else b
    ref = torch.tensor(a) // tb
    ours = tg.tensor(a) // gb
    assert str(ours.dtype) == str(ref.dtype).replace("torch.", "tapegrad.")
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())
    np.testing.assert_array_equal(tg.floor_divide(tg.tensor(a), gb).numpy(), ref.numpy())


def test_cumsum_of_ints_is_int64_like_torch():
    arr = np.array([[True, False], [True, True]])
    ours, ref = tg.tensor(arr).cumsum(0), torch.tensor(arr).cumsum(0)
    assert ours.dtype == np.int64 and ref.dtype == torch.int64
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())
