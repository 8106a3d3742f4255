"""float() of a tensor that requires grad: the value, and torch's warning, once.
"""
import pytest

import tapegrad as tg


# ---- the scalar-conversion warning ----------------------------------------------------------
def test_float_of_a_tensor_requiring_grad_warns_once_as_torch(monkeypatch):
    import sys
    monkeypatch.setattr(sys.modules["tapegrad._tensor"], "_SCALAR_WARNED", [])
    x = tg.tensor([1.5], requires_grad=True)
    with pytest.warns(UserWarning, match="Converting a tensor with requires_grad=True to a "
                                         "scalar may lead to unexpected behavior"):
        assert "%.1f" % x == "1.5"
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        float(x), x.item(), float(tg.tensor(2.0)), int(x)  # once per process; item() never
