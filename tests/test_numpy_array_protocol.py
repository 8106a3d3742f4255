"""`np.array(t)` / `np.asarray(t)` / `np.array(t, copy=False)` on a Tensor, against torch
2.13 (whose `Tensor.__array__` has no `copy` keyword, so NumPy 2 copies its result for
`np.array` and shares it for `np.asarray`): a written-to result must change the tensor
exactly when torch's does. tapegrad implements NumPy 2's `copy` protocol itself."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg

DTYPES = ["float32", "float64", "int64", "int32", "uint8", "bool", "float16"]
SHAPES = [(), (0,), (1,), (3,), (2, 3), (2, 1, 4)]


def _pair(shape, dtype):
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % 2 + 1
    a = np.asarray(a).astype(dtype)
    return torch.from_numpy(a.copy()), tg.tensor(a.copy())


def _shares(convert, t):
    """Whether writing to `convert(t)` writes to `t` (a nonempty result only)."""
    before = t.numpy().copy()
    out = convert(t)
    out[...] = 0
    changed = not np.array_equal(t.numpy(), before)
    t.numpy()[...] = before  # restore (t.numpy() shares in both libraries)
    return changed


CONVERSIONS = {
    "np.array": lambda t: np.array(t),
    "np.asarray": lambda t: np.asarray(t),
    "np.array(copy=True)": lambda t: np.array(t, copy=True),
    "np.copy": lambda t: np.copy(t),
    "np.asarray(same dtype)": lambda t: np.asarray(t, dtype=t.numpy().dtype),
    "np.array(same dtype)": lambda t: np.array(t, dtype=t.numpy().dtype),
    "np.asarray(float64)": lambda t: np.asarray(t, dtype=np.float64),
    "np.array(float64)": lambda t: np.array(t, dtype=np.float64),
    "np.asarray(int8)": lambda t: np.asarray(t, dtype=np.int8),
}


@pytest.mark.parametrize("name", list(CONVERSIONS))
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
def test_shares_exactly_when_torch_shares(name, dtype, shape):
    t_torch, t_tg = _pair(shape, dtype)
    convert = CONVERSIONS[name]
    want, got = convert(t_torch), convert(t_tg)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if want.size:
        assert _shares(convert, t_tg) == _shares(convert, t_torch)


def test_np_array_copies_the_tutorial_case():
    # a program keeps np.array(t) as a snapshot, then trains on
    for lib in (torch, tg):
        t = lib.ones(3)
        snap = np.array(t)
        t.add_(1)
        np.testing.assert_array_equal(snap, np.ones(3, dtype=np.float32))
        view = np.asarray(t)
        t.add_(1)
        np.testing.assert_array_equal(view, np.full(3, 3, dtype=np.float32))


def test_views_of_a_tensor():
    for lib in (torch, tg):
        t = lib.arange(6.0).reshape(2, 3)
        v = t[1]
        np.asarray(v)[0] = 30  # shares through the view, into t
        np.array(v)[1] = 40  # a copy
        np.testing.assert_array_equal(t.numpy(), [[0, 1, 2], [30, 4, 5]])


def test_copy_false_raises_where_a_copy_is_needed():
    for lib in (torch, tg):
        t = lib.ones(3)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # torch's missing copy=
            with pytest.raises(ValueError, match="Unable to avoid copy"):
                np.array(t, dtype=np.float64, copy=False)
            with pytest.raises(ValueError, match="Unable to avoid copy"):
                np.asarray(t, dtype=np.int64, copy=False)


def test_copy_false_shares_where_no_copy_is_needed():
    # NumPy 2's protocol: no copy needed, so none made. (torch 2.13's __array__ lacks the
    # keyword, so NumPy refuses every copy=False there, with a DeprecationWarning: an
    # artefact of the old protocol, not a rule tapegrad copies.)
    t = tg.ones(3)
    out = np.array(t, copy=False)
    out[0] = 7
    assert t.tolist() == [7.0, 1.0, 1.0]
    assert np.asarray(t, copy=False, dtype=np.float32) is t.numpy() or \
        np.shares_memory(np.asarray(t, copy=False), t.numpy())
