"""Anomaly mode: blame the first rule producing nan/inf; compare the blamed op with PyTorch."""
import re
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.core.state import state

pytestmark = pytest.mark.filterwarnings("ignore:Anomaly Detection")


def _torch_blame(fn, x0):
    """Name of the node PyTorch's anomaly mode blames (e.g. 'Mul'), or None."""
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with torch.autograd.detect_anomaly():
            y = fn(torch, x)
            try:
                y.sum().backward()
            except RuntimeError as e:
                return re.search(r"Function '(\w+?)Backward\d*'", str(e)).group(1).lower()
    return None


def _tg_blame(fn, x0, **kw):
    x = tg.tensor(x0, dtype=tg.float64, requires_grad=True)
    with tg.autograd.detect_anomaly(**kw):
        y = fn(tg, x)
        try:
            y.sum().backward()
        except RuntimeError as e:
            return re.search(r"Function '(\w+)'", str(e)).group(1), str(e)
    return None, None


def sqrt_sq(m, x):
    return m.sqrt(x * x)


def masked_where(m, x):
    return m.where(x > 0, m.sqrt(x), x)


def test_sqrt_of_square_blames_sqrt_with_site():
    # Worked example 5: sqrt's backward turns the finite gradient 1 into inf (1/(2*0)).
    x = tg.tensor(0.0, requires_grad=True)
    with tg.autograd.detect_anomaly():
        y = tg.sqrt(x * x); line = _lineno()  # noqa: E702
        with pytest.raises(RuntimeError) as ei:
            y.backward()
    msg = str(ei.value)
    assert msg.startswith("Function 'sqrt' returned inf values in its 0th output")
    assert f"test_anomaly.py:{line}" in msg
    assert "x = 0" in msg and "gradient for x = inf" in msg


def _lineno():
    import sys
    return sys._getframe(1).f_lineno


def test_nan_only_mode_blames_like_pytorch():
    # PyTorch checks nan only: it names the mul (where inf * 0 = nan first appears).
    assert _torch_blame(sqrt_sq, 0.0) == "mul"
    name, msg = _tg_blame(sqrt_sq, 0.0, check_inf=False)
    assert name == "mul"
    # the default (nan or inf) names where the trouble starts
    assert _tg_blame(sqrt_sq, 0.0)[0] == "sqrt"


def test_masked_where_pattern_recognised():
    x0 = [0.0, 1.0, 4.0]
    assert _torch_blame(masked_where, x0) == "sqrt"
    name, msg = _tg_blame(masked_where, x0)
    assert name == "sqrt"
    assert "masked-`where` pattern" in msg
    assert "at index (0,)" in msg and "incoming gradient = 0" in msg
    # without anomaly mode the nan silently reaches x.grad, as in PyTorch
    x = tg.tensor(x0, dtype=tg.float64, requires_grad=True)
    masked_where(tg, x).sum().backward()
    xt = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    masked_where(torch, xt).sum().backward()
    np.testing.assert_array_equal(np.isnan(x.grad.numpy()), np.isnan(xt.grad.numpy()))


@pytest.mark.parametrize("fn", [
    lambda m, x: m.sqrt(x * x + 1e-12),                          # the eps fix
    lambda m, x: m.where(x > 0, m.sqrt(m.where(x > 0, x, 1.0)), x),  # the safe-where fix
    lambda m, x: m.abs(x),
    lambda m, x: m.tanh(x) * m.exp(x),
])
def test_quiet_on_finite_gradients(fn):
    x0 = [0.0, -3.0, 2.0]
    assert _torch_blame(fn, x0) is None
    x = tg.tensor(x0, dtype=tg.float64, requires_grad=True)
    with tg.autograd.detect_anomaly():
        fn(tg, x).sum().backward()
    xt = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    fn(torch, xt).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_nan_in_forward_log_negative_quiet_like_pytorch():
    # log(-1) is nan in forward, but its rule 1/x is finite: neither library blames it.
    f = lambda m, x: m.log(x)  # noqa: E731
    assert _torch_blame(f, [-1.0]) is None
    assert _tg_blame(f, [-1.0])[0] is None


def test_mode_switches_and_cleanup():
    assert not state.observers and not tg.autograd.is_anomaly_enabled()
    with tg.autograd.detect_anomaly():
        assert tg.autograd.is_anomaly_enabled()
        assert state.observers
        y = tg.tensor(1.0, requires_grad=True) * 2
        assert y.grad_fn.site is not None and "test_anomaly.py" in y.grad_fn.site
    assert not state.observers and not tg.autograd.is_anomaly_enabled()
    y = tg.tensor(1.0, requires_grad=True) * 2
    assert y.grad_fn.site is None
    tg.autograd.set_detect_anomaly(True)
    try:
        assert tg.autograd.is_anomaly_enabled()
    finally:
        tg.autograd.set_detect_anomaly(False)
    assert not state.observers and state.record_sites == 0

    @tg.autograd.detect_anomaly()
    def f():
        return tg.autograd.is_anomaly_enabled()
    assert f() and not tg.autograd.is_anomaly_enabled()


def test_overflowing_exp_blamed_like_pytorch():
    # exp(1000) = inf in forward; the zero gradient from `* 0` meets exp' = inf: 0*inf = nan
    f = lambda m, x: m.exp(x) * 0.0  # noqa: E731
    assert _torch_blame(f, [1000.0, 1.0]) == "exp"
    name, msg = _tg_blame(f, [1000.0, 1.0])
    assert name == "exp"
    assert "1 of 2 entries" in msg and "output = inf" in msg and "0 * inf" in msg
