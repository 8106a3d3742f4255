"""Op-database entries for the fused nn kernels (tapegrad/ops/rules/nn.py).

Each entry runs the PUBLIC function (`tg.nn.functional.X` vs `torch.nn.functional.X`)
so the argument handling is checked too; the table op it exercises is `name`.
"""
import numpy as np

from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from _opinfo import (REAL, SEPARATED, Domain, OpInfo, Sample, draw_array, hyp_elementwise, op,
                     unary_samples)

import tapegrad as tg
from tapegrad.core.record import apply
from tapegrad.ops.rules import nn as nn_ops

PROB = Domain("prob", 0.05, 0.95, lambda rng, s: rng.uniform(0.05, 0.95, s))
UNIT = Domain("unit", 0.0, 1.0, lambda rng, s: rng.uniform(0.0, 1.0, s))
POS = Domain("pos", 0.5, 2.0, lambda rng, s: rng.uniform(0.5, 2.0, s))


def _F(lib):
    return lib.nn.functional


def _linear_samples(rng, info):
    r = rng.standard_normal
    return [Sample((r((4, 3)), r((5, 3)), r((5,)))),
            Sample((r((2, 4, 3)), r((5, 3)), r((5,))), note="batched"),
            Sample((r((3,)), r((2, 3)), None), note="1d-nobias"),
            Sample((r((4, 3)), r((1, 3)), r((1,))), note="one-output")]


def _targets(rng, n, C, shape=None):
    return rng.integers(0, C, size=shape if shape is not None else (n,)).astype(np.int64)


def _ce_samples(rng, info):
    r = rng.standard_normal
    t = _targets(rng, 6, 5)
    t_ign = t.copy()
    t_ign[[1, 4]] = 2
    w = rng.uniform(0.5, 2.0, 5)
    return [
        Sample((r((6, 5)), t)),
        Sample((r((6, 5)), t), dict(reduction="sum")),
        Sample((r((6, 5)), t), dict(reduction="none")),
        Sample((r((6, 5)), t, w), nograd=(2,), note="weight"),
        Sample((r((6, 5)), t, w), dict(reduction="none"), nograd=(2,), note="weight"),
        Sample((r((6, 5)), t_ign), dict(ignore_index=2), note="ignore"),
        Sample((r((6, 5)), t_ign, w), dict(ignore_index=2, label_smoothing=0.2), nograd=(2,),
               note="weight+ignore+smooth"),
        Sample((r((6, 5)), t), dict(label_smoothing=0.1), note="smooth"),
        Sample((r((6, 5)), t), dict(label_smoothing=0.1, reduction="sum"), note="smooth"),
        Sample((r((5,)), np.array(3, dtype=np.int64)), note="unbatched"),
        Sample((r((3, 4, 2)), _targets(rng, 3, 4, (3, 2))), note="K-dim"),
        Sample((r((3, 4, 2)), _targets(rng, 3, 4, (3, 2))), dict(reduction="none"),
               note="K-dim"),
        Sample((r((32, 27)), _targets(rng, 32, 27)), note="makemore"),
    ]


def _ce(lib, x, t, w=None, **kw):
    return _F(lib).cross_entropy(x, t, weight=w, **kw)


def _nll(lib, x, t, w=None, **kw):
    return _F(lib).nll_loss(x, t, weight=w, **kw)


def _nll_samples(rng, info):
    return [s for s in _ce_samples(rng, info) if "label_smoothing" not in s.kwargs]


def _bn_samples(rng, info):
    r = rng.standard_normal
    return [Sample((r((6, 3)), r((3,)), r((3,)))),
            Sample((r((4, 3, 5)), r((3,)), r((3,))), note="NCL"),
            Sample((r((2, 3, 2, 2)), r((3,)), r((3,))), note="NCHW"),
            Sample((r((5, 2)), None, None), note="no-affine"),
            Sample((r((2, 4)) * 10 + 3, r((4,)), r((4,))), dict(eps=1e-3), note="eps")]


def _bn(lib, x, w, b, eps=1e-5):
    return _F(lib).batch_norm(x, None, None, w, b, training=True, eps=eps)


def _ln_samples(rng, info):
    r = rng.standard_normal
    return [Sample((r((4, 5)), r((5,)), r((5,))), dict(ns=(5,))),
            Sample((r((2, 3, 4)), r((3, 4)), r((3, 4))), dict(ns=(3, 4)), note="2d-shape"),
            Sample((r((3, 4)), None, None), dict(ns=(4,)), note="no-affine"),
            Sample((r((6,)), r((6,)), None), dict(ns=(6,), eps=1e-3), note="1d")]


def _ln(lib, x, w, b, ns, eps=1e-5):
    return _F(lib).layer_norm(x, ns, w, b, eps)


def _emb_samples(rng, info):
    r = rng.standard_normal
    return [Sample((np.array([1, 3, 1, 0, 3, 3]), r((5, 4))), note="repeats"),
            Sample((np.array([[0, 2], [2, 2], [4, 1]]), r((5, 3))), note="2d-idx"),
            # NOTE: the padding row gets no gradient BY DEFINITION, so finite differences
            # (which see the row being used) disagree there: compared with torch only.
            Sample((np.array([1, 2, 1, 0]), r((4, 2))), dict(padding_idx=1), gradcheck=False,
                   note="padding"),
            Sample((np.array(2), r((3, 2))), note="0d-idx")]


def _emb(lib, idx, w, **kw):
    return _F(lib).embedding(idx, w, **kw)


def _dropout_tg(x, mask):
    return apply(nn_ops.dropout, x, mask=mask.data)


def _dropout_torch(x, mask):
    return x * mask  # the same mask: dropout is a mask multiply


def _dropout_samples(rng, info):
    out = []
    for shape in [(5,), (3, 4), ()]:
        keep = rng.random(shape) >= 0.3
        out.append(Sample((rng.standard_normal(shape), np.asarray(keep / 0.7)), nograd=(1,)))
    return out


def _bce_samples(rng, info):
    return [Sample((rng.uniform(0.05, 0.95, (4, 3)), rng.uniform(0, 1, (4, 3)))),
            Sample((rng.uniform(0.05, 0.95, (5,)), (rng.random(5) > 0.5) * 1.0),
                   dict(reduction="sum"), nograd=(1,), note="hard-labels"),
            Sample((rng.uniform(0.05, 0.95, (3, 2)), rng.uniform(0, 1, (3, 2)),
                    rng.uniform(0.5, 2, (3, 2))), dict(reduction="none"), nograd=(2,),
                   note="weight")]


def _bce(lib, x, y, w=None, **kw):
    return _F(lib).binary_cross_entropy(x, y, weight=w, **kw)


def _bcel_samples(rng, info):
    r = rng.standard_normal
    return [Sample((r((4, 3)) * 3, rng.uniform(0, 1, (4, 3)))),
            Sample((np.array([-40.0, -3.0, 0.5, 3.0, 40.0]), np.array([1.0, 0, 1, 0, 1])),
                   dict(reduction="sum"), nograd=(1,), note="large-logits"),
            Sample((r((3, 2)), rng.uniform(0, 1, (3, 2)), rng.uniform(0.5, 2, (3, 2))),
                   dict(reduction="none"), nograd=(2,), note="weight")]


def _bcel(lib, x, y, w=None, **kw):
    return _F(lib).binary_cross_entropy_with_logits(x, y, weight=w, **kw)


def _bcel_pw_samples(rng, info):
    r = rng.standard_normal
    return [Sample((r((4, 3)) * 3, rng.uniform(0, 1, (4, 3)), rng.uniform(0.5, 3, (3,))),
                   nograd=(2,)),
            Sample((r((5,)), (rng.random(5) > 0.5) * 1.0, rng.uniform(0.5, 3, (5,))),
                   dict(reduction="none"), nograd=(1, 2), note="hard-labels")]


def _bcel_pw(lib, x, y, pw, **kw):
    return _F(lib).binary_cross_entropy_with_logits(x, y, pos_weight=pw, **kw)


def _hyp_linear(draw, info):
    lead = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    fin, fout = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    x = draw_array(draw, lead + (fin,), REAL)
    w = draw_array(draw, (fout, fin), REAL)
    b = draw_array(draw, (fout,), REAL) if draw(st.booleans()) else None
    return Sample((x, w, b))


def _hyp_ce(draw, info):
    n, C = draw(st.integers(1, 5)), draw(st.integers(2, 5))
    x = draw_array(draw, (n, C), REAL)
    t = np.array(draw(st.lists(st.integers(0, C - 1), min_size=n, max_size=n)), dtype=np.int64)
    kw = dict(reduction=draw(st.sampled_from(["mean", "sum", "none"])),
              label_smoothing=draw(st.sampled_from([0.0, 0.1])))
    return Sample((x, t), kw)


def _hyp_norm(kind):
    def hyp(draw, info):
        # NOTE: min_side=3: over 2 values xhat is always +-1, so d xhat/dx = 0 exactly and
        # both libraries return rounding noise in float32.
        shape = draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=3, max_side=4))
        # NOTE: a spread keeps every channel's values apart: for (nearly) equal values
        # batch norm divides rounding noise by sqrt(eps), and float32 results are noise.
        spread = ((np.arange(int(np.prod(shape))) % 7) - 3.0).reshape(shape) * 0.37
        x = draw_array(draw, shape, REAL) + spread
        if kind == "bn":
            return Sample((x, draw_array(draw, (shape[1],), REAL),
                           draw_array(draw, (shape[1],), REAL)))
        ns = shape[-1:]
        return Sample((x, draw_array(draw, ns, REAL), draw_array(draw, ns, REAL)), dict(ns=ns))
    return hyp


ENTRIES = [
    op("linear", lambda lib, x, w, b: _F(lib).linear(x, w, b), _linear_samples,
       hyp=_hyp_linear, covers=("sum_over_axes",)),  # the bias (and norm weight) sums
    op("cross_entropy", _ce, _ce_samples, hyp=_hyp_ce,
       covers=("softmax_rows", "softmax_minus_onehot")),
    op("nll_loss", _nll, _nll_samples),
    # f32_tol: normalizing divides by the spread of 3-4 values; float32 loses ~1e-5 there
    op("batch_norm", _bn, _bn_samples, hyp=_hyp_norm("bn"), f32_tol=(1e-4, 1e-5),
       covers=("norm_xhat", "norm_invstd", "normalized_grad")),  # second order runs them
    op("layer_norm", _ln, _ln_samples, hyp=_hyp_norm("ln"), f32_tol=(1e-4, 1e-5),
       covers=("norm_xhat", "norm_invstd", "normalized_grad")),
    op("embedding", _emb, _emb_samples, covers=("embedding_backward",)),
    op("leaky_relu", lambda lib, x, **kw: _F(lib).leaky_relu(x, **kw),
       unary_samples(negative_slope=0.2), domain=SEPARATED, hyp=hyp_elementwise(1)),
    # hardtanh's own entry: the gradient passes strictly inside the bounds (SEPARATED keeps
    # samples away from the kinks at -1 and 1)
    op("hardtanh", lambda lib, x, **kw: _F(lib).hardtanh(x, **kw), unary_samples(),
       domain=SEPARATED, hyp=hyp_elementwise(1)),
    op("gelu", lambda lib, x, **kw: _F(lib).gelu(x, **kw), unary_samples(), domain=REAL,
       covers=("gelu_backward",), hyp=hyp_elementwise(1)),
    op("gelu", lambda lib, x, **kw: _F(lib).gelu(x, **kw), unary_samples(approximate="tanh"),
       domain=REAL, variant="tanh"),
    OpInfo("dropout", _dropout_tg, _dropout_torch, _dropout_samples),
    op("binary_cross_entropy", _bce, _bce_samples),
    op("binary_cross_entropy_with_logits", _bcel, _bcel_samples),
    op("binary_cross_entropy_with_logits_pos_weight", _bcel_pw, _bcel_pw_samples,
       covers=("softplus_neg",)),  # its rules read log(1 + exp(-x)) through softplus_neg
]
