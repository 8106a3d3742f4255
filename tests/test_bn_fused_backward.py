"""batch_norm's one-call backward (`_bn_backward`) against its per-input rules and torch.

The engine runs `backward=` (dx, dw, db sharing sum(g * xhat) and sum(g)); tools that
need one input's rule run the `vjp` list. Both must give the same arrays bit for bit,
and torch's gradients, with a weight that is not all ones (at 1 the weight's place in
the formula cannot be seen).
"""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.ops.rules import nn as N

SHAPES = [((32, 200), (0,)), ((6, 3, 5), (0, 2)), ((2, 3, 4, 4), (0, 2, 3))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
@pytest.mark.parametrize("shape,axes", SHAPES)
@pytest.mark.parametrize("affine", [True, False])
@pytest.mark.parametrize("correction", [0, 1])
def test_fused_equals_rules_bitwise(dtype, shape, axes, affine, correction):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    C = shape[1]
    w = (rng.standard_normal(C) * 3).astype(dtype) if affine else None
    b = rng.standard_normal(C).astype(dtype) if affine else None
    out, saved = N._bn_forward(x, w, b, axes=axes, eps=1e-5, correction=correction)
    g = rng.standard_normal(shape).astype(dtype)
    kw = dict(axes=axes, eps=1e-5, correction=correction, **saved)
    fused = N._bn_backward(np, g, out, x, w, b, **kw)
    rules = [N._bn_dx(np, g, out, x, w, b, **kw)]
    if affine:
        rules += [N._bn_dw(np, g, out, x, w, b, **kw), N._bn_db(np, g, out, x, w, b, **kw)]
    else:
        assert fused[1] is None and fused[2] is None
    for got, ref in zip(fused, rules):
        assert got.dtype == ref.dtype and got.shape == ref.shape
        assert np.array_equal(got, ref)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float32, 2e-5)])
@pytest.mark.parametrize("shape,axes", SHAPES)
def test_gradients_match_torch_non_unit_weight(dtype, tol, shape, axes):
    rng = np.random.default_rng(1)
    x0 = rng.standard_normal(shape).astype(dtype)
    C = shape[1]
    w0 = (rng.standard_normal(C) * 3).astype(dtype)
    b0 = rng.standard_normal(C).astype(dtype)
    up = rng.standard_normal(shape).astype(dtype)
    ours = [tg.tensor(a, requires_grad=True) for a in (x0, w0, b0)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x0, w0, b0)]
    y = tg.nn.functional.batch_norm(ours[0], None, None, ours[1], ours[2], training=True)
    (y * tg.tensor(up)).sum().backward()
    yt = torch.nn.functional.batch_norm(theirs[0], None, None, theirs[1], theirs[2],
                                        training=True)
    (yt * torch.tensor(up)).sum().backward()
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


def test_second_order_matches_torch_non_unit_weight():
    # create_graph: the per-input rules run (recorded); d/dw of sum(dx * v) vs torch
    rng = np.random.default_rng(2)
    x0, w0, b0 = rng.standard_normal((8, 4)), rng.standard_normal(4) * 2, rng.standard_normal(4)
    v = rng.standard_normal((8, 4))
    ours = [tg.tensor(a, requires_grad=True) for a in (x0, w0, b0)]
    theirs = [torch.tensor(a, requires_grad=True) for a in (x0, w0, b0)]
    y = tg.nn.functional.batch_norm(ours[0], None, None, ours[1], ours[2], training=True)
    (gx,) = tg.autograd.grad((y * y).sum(), [ours[0]], create_graph=True)
    (gx * tg.tensor(v)).sum().backward()
    yt = torch.nn.functional.batch_norm(theirs[0], None, None, theirs[1], theirs[2],
                                        training=True)
    (gxt,) = torch.autograd.grad((yt * yt).sum(), [theirs[0]], create_graph=True)
    (gxt * torch.tensor(v)).sum().backward()
    for a, t in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_batch_norm_one_dimensional_inputs_as_torch():
    """A 1-D input has no channel axis: torch returns an empty one as it is; a non-empty
    one has its parameters checked against 0 features, then is refused (IndexError)."""
    import torch.nn.functional as TF
    from _helpers import assert_raises_as_torch
    import tapegrad.nn.functional as F
    for training in (False, True):
        x = tg.zeros(0, requires_grad=True)
        out = F.batch_norm(x, tg.zeros(0), tg.ones(0), training=training)
        want = TF.batch_norm(torch.zeros(0), torch.zeros(0), torch.ones(0), training=training)
        assert tuple(out.shape) == tuple(want.shape) == (0,)
        out.sum().backward()
        assert tuple(x.grad.shape) == (0,)
        assert_raises_as_torch(lambda m: m.nn.functional.batch_norm(
            m.ones(3), m.zeros(3), m.ones(3), training=training), tg)
        assert_raises_as_torch(lambda m: m.nn.functional.batch_norm(
            m.ones(3), m.zeros(0), m.ones(0), m.ones(2), training=training), tg)
        assert_raises_as_torch(lambda m: m.nn.functional.batch_norm(
            m.ones(3), None, None, training=True), tg, chars=30)
