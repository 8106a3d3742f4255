"""The Tensor.new_* constructors (new_zeros, new_ones, new_full, new_empty, new_tensor)
against torch: dtypes and values for float and integer tensors; new_tensor copies without
history; makemore's counting with new_zeros.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg


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
