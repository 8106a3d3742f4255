"""F.instance_norm and nn.InstanceNorm1d/2d/3d against torch: values and gradients with and
without affine parameters and running statistics, gradcheck, errors, the num_features
warning.
"""
import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn as nn
import tapegrad.nn.functional as F

from _helpers import assert_raises_as_torch
from _nn_compare import compare, rng
from _nn_helpers import TOL


DTYPES = [np.float64, np.float32]


# ---- instance norm ----------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(2, 3, 7), (3, 2, 4, 5), (1, 3, 2, 3, 2)])
@pytest.mark.parametrize("affine,stats", [(False, False), (True, False), (True, True),
                                          (False, True)])
def test_instance_norm_functional(shape, affine, stats, dtype):
    r = rng(20)
    C = shape[1]
    x = r.standard_normal(shape) * 2 + 0.5
    w, b = r.uniform(0.5, 1.5, C), r.standard_normal(C)
    rm, rv = r.standard_normal(C), r.uniform(0.5, 2.0, C)
    for use_input_stats in (True, False) if stats else (True,):
        state = {}

        def run(lib, F_, *ts):
            args = list(ts)
            xx, ww, bb = args[0], (args[1] if affine else None), (args[2] if affine else None)
            m, v = (lib.tensor(rm.astype(dtype)), lib.tensor(rv.astype(dtype))) if stats \
                else (None, None)
            out = F_.instance_norm(xx, m, v, ww, bb, use_input_stats, 0.3, 1e-3)
            state[lib.__name__] = (m, v)
            return out

        compare(lambda *ts: run(tg, F, *ts), lambda *ts: run(torch, TF, *ts),
                [x, w, b] if affine else [x], dtype)
        if stats:  # the running statistics, updated in place (only with input statistics)
            for a, t in zip(state["tapegrad"], state["torch"]):
                np.testing.assert_allclose(np.asarray(a.detach().numpy()), t.numpy(),
                                           **TOL[dtype])


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("cls,shape", [("InstanceNorm1d", (4, 3, 6)), ("InstanceNorm1d", (3, 6)),
                                       ("InstanceNorm2d", (2, 3, 4, 5)),
                                       ("InstanceNorm2d", (3, 4, 5))])
@pytest.mark.parametrize("kw", [dict(), dict(affine=True), dict(track_running_stats=True),
                                dict(affine=True, track_running_stats=True, momentum=None),
                                dict(affine=True, bias=False, eps=1e-3, momentum=0.5)])
def test_instance_norm_modules(cls, shape, kw, dtype):
    from _nn_helpers import compare_module
    m, tm = getattr(nn, cls)(3, **kw), getattr(tnn, cls)(3, **kw)
    assert repr(m) == repr(tm)
    assert sorted(m.state_dict()) == sorted(tm.state_dict())
    if m.weight is not None:  # not the initial ones / zeros, so the affine part is tested
        m.weight.data.copy_(tg.tensor(rng(21).uniform(0.5, 1.5, 3)))
    compare_module(m, tm, rng(22).standard_normal(shape) * 2 + 1, dtype, steps=2)
    m.eval()
    tm.eval()
    compare_module(m, tm, rng(23).standard_normal(shape), dtype)


def test_instance_norm_gradcheck():
    r = rng(24)
    x = tg.tensor(r.standard_normal((2, 3, 5)), requires_grad=True)
    w = tg.tensor(r.uniform(0.5, 1.5, 3), requires_grad=True)
    b = tg.tensor(r.standard_normal(3), requires_grad=True)
    assert tg.autograd.gradcheck(lambda a, c, d: F.instance_norm(a, weight=c, bias=d), (x, w, b))


IN_ERRORS = {
    "one spatial element": lambda L: L.nn.functional.instance_norm(L.ones(2, 3, 1)),
    "no running stats": lambda L: L.nn.functional.instance_norm(L.ones(2, 3, 4),
                                                                use_input_stats=False),
    "1d rank": lambda L: L.nn.InstanceNorm1d(3)(L.ones(2, 3, 4, 5)),
    "2d rank": lambda L: L.nn.InstanceNorm2d(3)(L.ones(3, 4)),
    "affine features": lambda L: L.nn.InstanceNorm2d(4, affine=True)(L.ones(2, 3, 4, 5)),
}


@pytest.mark.parametrize("case", sorted(IN_ERRORS))
def test_instance_norm_errors(case):
    assert_raises_as_torch(IN_ERRORS[case], tg, 60)


def test_instance_norm_features_warning():
    with pytest.warns(UserWarning, match="does not match num_features"):
        nn.InstanceNorm1d(4)(tg.ones(2, 3, 5))
