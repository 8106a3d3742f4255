"""torch.nn's padding modules (constant, zero, reflection, replication, circular; 1d/2d/3d)
against torch: values and gradients (float64 tight, float32), gradcheck, errors.
"""
import numpy as np
import pytest
import torch.nn as tnn

import tapegrad as tg
import tapegrad.nn as nn

from _helpers import assert_raises_as_torch
from _nn_compare import compare, rng


DTYPES = [np.float64, np.float32]


# ---- padding modules ----------------------------------------------------------------------
PAD_CASES = [
    ("ConstantPad1d", (2, 3.5), [(3, 5), (2, 3, 5), (4,)]),
    ("ConstantPad1d", ((1, -1), -2.0), [(2, 3, 5)]),
    ("ConstantPad2d", ((1, 2, 0, 3), 1.5), [(2, 4, 5), (1, 2, 4, 5)]),
    ("ConstantPad3d", (1, 0.0), [(2, 3, 4, 5), (1, 2, 3, 4, 5)]),
    ("ZeroPad1d", ((2, 0),), [(3, 5), (2, 3, 5)]),
    ("ZeroPad2d", ((1, 1, 2, 0),), [(2, 4, 5), (1, 2, 4, 5)]),
    ("ZeroPad3d", (1,), [(2, 3, 4, 5)]),
    ("ReflectionPad1d", (2,), [(3, 5), (2, 3, 5)]),
    ("ReflectionPad1d", ((3, 1),), [(2, 3, 5)]),
    ("ReflectionPad2d", ((1, 2, 3, 0),), [(2, 4, 5), (1, 2, 4, 5)]),
    ("ReflectionPad3d", (1,), [(2, 3, 4, 5), (1, 2, 3, 4, 5)]),
    ("ReplicationPad1d", ((4, 1),), [(3, 5), (2, 3, 5)]),
    ("ReplicationPad2d", (2,), [(2, 4, 5), (1, 2, 4, 5)]),
    ("ReplicationPad3d", ((1, 0, 2, 1, 0, 3),), [(2, 3, 4, 5), (1, 2, 3, 4, 5)]),
    ("CircularPad1d", ((2, 5),), [(3, 5), (2, 3, 5)]),
    ("CircularPad2d", ((1, 2, 3, 0),), [(2, 4, 5), (1, 2, 4, 5)]),
    ("CircularPad3d", (1,), [(2, 3, 4, 5), (1, 2, 3, 4, 5)]),
]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name,args,shapes", PAD_CASES)
def test_padding_modules(name, args, shapes, dtype):
    m, tm = getattr(nn, name)(*args), getattr(tnn, name)(*args)
    assert repr(m) == repr(tm)
    assert m.padding == tm.padding
    for shape in shapes:
        compare(m, tm, [rng(1).standard_normal(shape)], dtype)


PAD_ERRORS = [
    ("ConstantPad2d", (1, 1.0), (5,)),
    ("ZeroPad3d", (1,), (4, 5)),
    ("ReflectionPad1d", (2,), (5,)),
    ("ReflectionPad1d", (2,), (2, 3, 4, 5)),
    ("ReflectionPad1d", (5,), (2, 3)),
    ("ReflectionPad2d", (1,), (3, 4)),
    ("ReflectionPad2d", (1,), (1, 2, 3, 4, 5)),
    ("ReflectionPad3d", (1,), (3, 4, 5)),
    ("ReplicationPad1d", (1,), (1, 2, 3, 4)),
    ("ReplicationPad2d", (1,), (3, 4)),
    ("ReplicationPad3d", (1,), (3, 4, 5)),
    ("CircularPad1d", (1,), (5,)),
    ("CircularPad1d", (1,), (1, 2, 3, 4)),
    ("CircularPad2d", (1,), (3, 4)),
    ("CircularPad3d", (1,), (3, 4, 5)),
    ("CircularPad1d", (5,), (2, 3)),
]


@pytest.mark.parametrize("name,args,shape", PAD_ERRORS)
def test_padding_errors(name, args, shape):
    x = np.zeros(shape)
    assert_raises_as_torch(lambda lib: getattr(lib.nn, name)(*args)(lib.tensor(x)), tg, 60)


def test_padding_gradcheck():
    for m in (nn.ReflectionPad2d((1, 2, 2, 0)), nn.CircularPad1d(2), nn.ReplicationPad3d(1),
              nn.ConstantPad2d(1, 2.0)):
        x = tg.tensor(rng(2).standard_normal((1, 2, 3, 4, 4)[-(len(m.padding) // 2 + 2):]),
                      requires_grad=True)
        assert tg.autograd.gradcheck(m, (x,))
