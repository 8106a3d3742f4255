"""Issue 17 item 4: dtypes print one way, torch's (`torch.float32` -> `tapegrad.float32`),
in `x.dtype`, the dtype names, tensor reprs and error messages; and the dtype objects
still work wherever NumPy takes a dtype."""
import copy
import pickle

import numpy as np
import pytest
import torch

import tapegrad as tg

NAMES = ["float16", "float32", "float64", "int8", "uint8", "int16", "int32", "int64", "bool"]


def _ours(s):
    return s.replace("torch.", "tapegrad.")


@pytest.mark.parametrize("name", NAMES)
def test_dtype_repr_and_str_are_torchs(name):
    t = torch.zeros(2, dtype=getattr(torch, name))
    x = tg.zeros(2, dtype=getattr(tg, name))
    assert repr(x.dtype) == _ours(repr(t.dtype)) == f"tapegrad.{name}"
    assert str(x.dtype) == _ours(str(t.dtype)) and f"{x.dtype}" == f"tapegrad.{name}"
    assert repr(getattr(tg, name)) == _ours(repr(getattr(torch, name)))
    assert x.dtype is getattr(tg, name) and isinstance(x.dtype, tg.dtype)
    assert x.dtype.is_floating_point == t.dtype.is_floating_point
    assert x.dtype.is_signed == t.dtype.is_signed and x.dtype.itemsize == t.dtype.itemsize


def test_aliases_and_default_dtype_print_like_torch():
    for alias in ("float", "double", "half", "int", "long", "short"):
        assert repr(getattr(tg, alias)) == _ours(repr(getattr(torch, alias)))
    assert repr(tg.get_default_dtype()) == _ours(repr(torch.get_default_dtype()))


@pytest.mark.parametrize("dtype", ["float64", "float16", "int32", "uint8"])
def test_tensor_repr_with_a_non_default_dtype(dtype):
    t = torch.tensor([1.0, 2.5] if "float" in dtype else [1, 2], dtype=getattr(torch, dtype))
    x = tg.tensor([1.0, 2.5] if "float" in dtype else [1, 2], dtype=getattr(tg, dtype))
    assert repr(x) == _ours(repr(t))
    assert "dtype('" not in repr(x)


def test_error_messages_name_dtypes_as_torch_does():
    with pytest.raises(RuntimeError) as te:
        torch.tensor([1, 2]).requires_grad_()
    with pytest.raises(RuntimeError) as ei:
        tg.tensor([1, 2]).requires_grad_()
    assert str(te.value).startswith("only Tensors of floating point")
    assert "(this tensor is tapegrad.int64)" in str(ei.value)
    x = tg.zeros(3)
    with pytest.raises(RuntimeError) as ei:
        x.index_add_(0, tg.tensor([0]), tg.ones(1, dtype=tg.float64))
    assert "self (tapegrad.float32) and source (tapegrad.float64)" in str(ei.value)
    with pytest.raises(TypeError) as ei:
        tg.set_default_dtype(tg.int64)
    assert str(ei.value).endswith("got tapegrad.int64")


def test_dtype_objects_still_work_as_numpy_dtypes():
    d = tg.float32
    assert d == np.float32 and d == np.dtype("float32") and np.dtype("float32") == d
    assert d != tg.float64 and d != np.float64 and d != tg.bfloat16
    assert hash(d) == hash(np.dtype("float32")) and {np.dtype("float32"): 1}[d] == 1
    assert np.zeros(2, d).dtype == np.float32 and np.ones(2).astype(d).dtype == np.float32
    assert np.dtype(d) is np.dtype("float32") and np.finfo(d).eps == np.finfo(np.float32).eps
    assert d.kind == "f" and d.name == "float32" and d.type is np.float32
    assert copy.deepcopy(d) is d and pickle.loads(pickle.dumps(d)) is d
    assert tg.zeros(2, dtype=np.float64).dtype is tg.float64
    assert tg.zeros(2, dtype="float16").dtype is tg.float16
    assert tg.zeros(2).to(tg.int64).dtype is tg.int64
