"""Small helpers shared by the differential tests (tapegrad against torch).

`from _helpers import assert_close, to_numpy` (tests/ is on the path, as for _opinfo).
"""
import numpy as np
import torch


def to_numpy(t):
    """The values of a torch tensor (detached) or of a tapegrad tensor, as a NumPy array."""
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.data)


def assert_close(a, b, rtol=1e-10, atol=1e-12):
    """Assert that two tensors agree elementwise (torch or tapegrad, in any mix); the
    default tolerances are the float64 ones of the differential tests."""
    np.testing.assert_allclose(to_numpy(a), to_numpy(b), rtol=rtol, atol=atol)


def error_of(fn):
    """(exception type name, message) of what `fn()` raises, None if it returns: compared
    between tapegrad and torch in the error-case tests."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001  any error, compared with the other library's
        return type(e).__name__, str(e)
    return None


def assert_raises_as_torch(fn, tg, chars=40, same_type=False):
    """`fn(torch)` and `fn(tg)` both raise; tapegrad's exception is (a subclass of) torch's
    type (`same_type`: that type itself) and the first line of its message starts with
    the same `chars` characters."""
    import pytest
    with pytest.raises(Exception) as want:
        fn(torch)
    with pytest.raises(Exception) as got:
        fn(tg)
    if same_type:
        assert type(got.value) is type(want.value), (got.value, want.value)
    assert issubclass(type(got.value), type(want.value)), (got.value, want.value)
    w, g = str(want.value).split("\n")[0], str(got.value).split("\n")[0]
    assert g[:chars] == w[:chars], (g, w)


def assert_same_result(got, want, rtol=1e-6):
    """A tapegrad result equals torch's: tensors (in nested tuples/lists) by dtype name,
    shape and values (NaN equal to NaN), anything else by ==."""
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_same_result(g, w, rtol)
        return
    if isinstance(want, torch.Tensor):
        assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
        assert tuple(got.shape) == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=rtol,
                                   equal_nan=True)
    else:
        assert got == want


def grads_of(L, fn, *arrays):
    """The float64 gradients of fn(L, *tensors of `arrays`) in library L (torch or
    tapegrad), each output weighted by a fixed ramp cotangent (the same in both)."""
    xs = [L.tensor(a, dtype=L.float64, requires_grad=True) for a in arrays]
    out = fn(L, *xs)
    outs = out if isinstance(out, tuple) else (out,)
    gs = [L.tensor(np.linspace(-1.0, 2.0, int(np.prod(o.shape))).reshape(tuple(o.shape)))
          for o in outs]
    return L.autograd.grad(outs, xs, gs, allow_unused=True)
