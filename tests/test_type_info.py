"""tg.finfo / tg.iinfo against torch.finfo / torch.iinfo: every attribute, the repr, the
default dtype, equality, and the errors (type and message)."""
import pytest
import torch

import tapegrad as tg
from _helpers import error_of

FLOATS = ["float16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]


@pytest.mark.parametrize("name", FLOATS)
def test_finfo_as_torch(name):
    a, b = tg.finfo(getattr(tg, name)), torch.finfo(getattr(torch, name))
    for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "dtype"):
        assert getattr(a, attr) == getattr(b, attr), attr
        assert type(getattr(a, attr)) is type(getattr(b, attr)), attr
    assert repr(a) == repr(b) and str(a) == str(b)
    assert a == tg.finfo(getattr(tg, name))


def test_finfo_default_is_the_default_dtype():
    assert repr(tg.finfo()) == repr(torch.finfo())
    tg.set_default_dtype(tg.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert repr(tg.finfo()) == repr(torch.finfo()) and tg.finfo().dtype == "float64"
    finally:
        tg.set_default_dtype(tg.float32)
        torch.set_default_dtype(torch.float32)


@pytest.mark.parametrize("name", INTS)
def test_iinfo_as_torch(name):
    a, b = tg.iinfo(getattr(tg, name)), torch.iinfo(getattr(torch, name))
    for attr in ("bits", "max", "min", "dtype"):
        assert getattr(a, attr) == getattr(b, attr), attr
        assert type(getattr(a, attr)) is type(getattr(b, attr)), attr
    assert repr(a) == repr(b)



@pytest.mark.parametrize("call", [
    lambda lib: lib.finfo(lib.int32),
    lambda lib: lib.finfo(lib.bool),
    lambda lib: lib.iinfo(lib.float32),
    lambda lib: lib.iinfo(lib.bool),
    lambda lib: lib.finfo("float32"),
    lambda lib: lib.finfo(3),
])
def test_errors_as_torch(call):
    want = error_of(lambda: call(torch))
    assert want is not None
    assert error_of(lambda: call(tg)) == want


def test_unhashable_and_missing_argument_as_torch():
    for lib in (tg, torch):
        with pytest.raises(TypeError):
            hash(lib.finfo(lib.float32))
        with pytest.raises(TypeError):
            lib.iinfo()


def test_masked_fill_with_finfo_min():
    """The attention-mask idiom: scores.masked_fill(mask, torch.finfo(scores.dtype).min)
    and a softmax over it, values and gradients as torch."""
    import numpy as np
    s = np.random.default_rng(0).standard_normal((2, 4, 4)).astype(np.float32)
    mask = np.triu(np.ones((4, 4), dtype=bool), 1)
    out = {}
    for lib in (tg, torch):
        x = lib.tensor(s, requires_grad=True)
        y = x.masked_fill(lib.tensor(mask), lib.finfo(x.dtype).min).softmax(-1)
        (y * lib.arange(4.0)).sum().backward()
        out[lib.__name__] = (y.detach().numpy(), x.grad.numpy())
    np.testing.assert_allclose(out["tapegrad"][0], out["torch"][0], rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(out["tapegrad"][1], out["torch"][1], rtol=1e-5, atol=1e-7)
