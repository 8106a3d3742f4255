"""The promotion kind is declared at the table entry (`defop(..., promote="div")`) and
ops/promotion.py reads it from there: `P.operands(op, a, b)` gives the dtypes torch
computes `a op b` in, for every binary entry that declares a kind, checked against torch's
own result dtype."""
import itertools

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.ops import promotion as P
from tapegrad.ops.registry import OPS, PROMOTE_KINDS

_BINARY = {"add": torch.add, "sub": torch.sub, "mul": torch.mul, "div": torch.div,
           "pow": torch.pow, "maximum": torch.maximum, "minimum": torch.minimum,
           "remainder": torch.remainder, "fmod": torch.fmod, "atan2": torch.atan2}
_DTYPES = ["float32", "float64", "float16", "int64", "int32", "uint8"]


def test_every_declared_kind_is_known():
    declared = {op.promote for op in OPS.values() if op.promote is not None}
    assert declared and declared <= PROMOTE_KINDS
    assert {OPS[n].promote for n in _BINARY} == {"arith", "sub", "div", "pow", "remainder",
                                                 "fmod"}


def _dtype(x):
    return x.dtype if isinstance(x, tg.Tensor) else type(x)


@pytest.mark.parametrize("name", sorted(_BINARY))
def test_operands_of_the_entry_compute_in_torchs_dtype(name):
    op = OPS[name]
    for da, db in itertools.product(_DTYPES, _DTYPES + ["0d-float64", "py-float", "py-int"]):
        if name in ("maximum", "minimum", "atan2") and db.startswith("py"):
            continue  # tensors only, as in torch
        a = np.array([1, 2], dtype=da)
        if db == "py-float":
            b, tb = 1.5, 1.5
        elif db == "py-int":
            b, tb = 2, 2
        elif db == "0d-float64":
            b, tb = tg.tensor(np.float64(2.0)), torch.tensor(2.0, dtype=torch.float64)
        else:
            b, tb = tg.tensor(np.array([2, 3], dtype=db)), torch.tensor([2, 3],
                                                                       dtype=getattr(torch, db))
        ta = torch.tensor([1, 2], dtype=getattr(torch, da))
        want = _BINARY[name](ta, tb).dtype
        ca, cb = P.operands(op, tg.tensor(a), b)
        by_mode = P.operands(op.promote, tg.tensor(a), b)
        assert [_dtype(x) for x in (ca, cb)] == [_dtype(x) for x in by_mode]
        with np.errstate(all="ignore"):
            got = op.forward(ca._data, cb._data if isinstance(cb, tg.Tensor) else cb)
        assert str(np.asarray(got).dtype) == str(want).split(".")[1], (name, da, db)
