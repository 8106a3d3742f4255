"""Op-database entries: reductions and scans: sum, mean, prod, max/min (whole and along a dim),
amax/amin, var/std (and *_mean), logsumexp, argmax/argmin, softmax/log_softmax, quantiles,
nan-reductions, aminmax, dist, cumsum/cumprod/cummax/cummin, diff, trapezoid.

Values and gradients against torch in float64 and float32, gradcheck, second order,
hypothesis where `hyp` is set (tests/test_opdb.py), forward mode (tests/test_forward_mode.py).
"""
import numpy as np

from _opinfo import Domain, SEPARATED, SPREAD, Sample, hyp_reduce, op, unary_samples
from opdb.samples import APART, E1, _matrix_samples, _shapes, _ties_full


def _with_zeros(rng, info):
    x = rng.uniform(-2.0, 2.0, (3, 4))
    return [Sample((np.array([[1.5, 0.0, 2.0], [0.0, 0.0, -1.0]]),), {"dim": 1}, note="zeros"),
            Sample((np.array([[1.5, 0.0, 2.0], [0.5, 0.7, -1.0]]),), {}, note="one zero"),
            Sample((np.array([0.0, 0.0, 3.0]),), {}, note="two zeros"),
            Sample((np.array([1.0, 0.0, 3.0]),), {"dim": 0, "keepdim": True}, note="zero")]


def _nan_full(rng, info):
    # issue 14: a NaN in the forward reaches the gradient as in PyTorch
    return [Sample((np.array([[1.0, np.nan, 3.0], [0.5, 3.0, -2.0]]),), gradcheck=False,
                   note="nan"),
            Sample((np.array([np.nan, 2.0, np.nan]),), gradcheck=False, note="two nans")]


def _nan_amax(rng, info):
    x = np.array([[1.0, np.nan, 3.0], [0.5, 3.0, -2.0], [np.nan, np.nan, 0.0]])
    return [Sample((x,), {"dim": 1}, gradcheck=False, note="nan"),
            Sample((x,), {"dim": 0, "keepdim": True}, gradcheck=False, note="nan"),
            Sample((x,), gradcheck=False, note="nan")]


def _reduce_samples(dims_ok=("none", "int", "neg", "tuple"), extra=None):
    extra = extra or {}

    def gen(rng, info):
        d = info.domain_for(0)
        out = [Sample((d.sample(rng, (2, 3, 4)),), dict(extra))] if "none" in dims_ok else []
        out += [Sample((d.sample(rng, ()),), dict(extra))] if "none" in dims_ok else []
        out += [Sample((d.sample(rng, (5,)),), {"dim": 0, **extra}),
                Sample((d.sample(rng, ()),), {"dim": 0, **extra}, note="0d"),
                Sample((d.sample(rng, (2, 3, 4)),), {"dim": 1, **extra}),
                Sample((d.sample(rng, (2, 1, 4)),), {"dim": 1, "keepdim": True, **extra}),
                Sample((d.sample(rng, (3, 4)),), {"dim": -1, "keepdim": True, **extra})]
        if "tuple" in dims_ok:
            out += [Sample((d.sample(rng, (2, 3, 4)),), {"dim": (0, 2), **extra}),
                    Sample((d.sample(rng, (2, 3, 4)),), {"dim": (-1, 0), "keepdim": True,
                                                          **extra})]
        return out
    return gen


def _max_dim_samples(rng, info):
    d = SEPARATED
    return [
        Sample((d.sample(rng, (3, 4)),), {"dim": 1}),
        Sample((d.sample(rng, (3, 4)),), {"dim": 0, "keepdim": True}),
        Sample((d.sample(rng, (2, 3, 2)),), {"dim": -1}),
        Sample((d.sample(rng, ()),), {"dim": 0}, note="0d"),
        Sample((d.sample(rng, (1, 4)),), {"dim": 0}),
        Sample((np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 2.0]]),), {"dim": 1},
               gradcheck=False, note="ties"),
        Sample((np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 2.0]]),), {"dim": 0},
               gradcheck=False, note="ties"),
        Sample((np.array([[1.0, np.nan, 3.0], [2.0, 0.5, 1.0]]),), {"dim": 1},
               gradcheck=False, note="nan"),
    ]


def _amax_samples(rng, info):
    d = SEPARATED
    return [
        Sample((d.sample(rng, (3, 4)),)), Sample((d.sample(rng, ()),)),
        Sample((d.sample(rng, (3, 4)),), {"dim": 1}),
        Sample((d.sample(rng, (2, 3, 4)),), {"dim": (0, 2), "keepdim": True}),
        Sample((d.sample(rng, (2, 3)),), {"dim": -1, "keepdim": True}),
        Sample((np.array([[1.0, 3.0, 3.0], [3.0, 0.0, -1.0]]),), {"dim": 1},
               gradcheck=False, note="ties"),
        Sample((np.array([[1.0, 3.0, 3.0], [3.0, 0.0, -1.0]]),), {"dim": (0, 1)},
               gradcheck=False, note="ties"),
        Sample((np.array([[1.0, 3.0, 3.0], [3.0, 0.0, -1.0]]),), {}, gradcheck=False,
               note="ties"),
    ]


def _arg_samples(rng, info):
    return [Sample((rng.standard_normal((3, 4)),)), Sample((rng.standard_normal(()),)),
            Sample((rng.standard_normal((3, 4)),), {"dim": 1}),
            Sample((rng.standard_normal((3, 4)),), {"dim": 0, "keepdim": True}),
            Sample((rng.standard_normal((2, 3, 4)),), {"dim": -1}),
            Sample((np.array([[1.0, 3.0, 3.0, 0.0], [2.0, 2.0, 1.0, 2.0]]),), {"dim": 1},
                   note="ties"),
            Sample((np.array([[0.0, 0.0], [0.0, 0.0]]),), {}, note="ties")]


def _var_samples(rng, info):
    x = lambda s: rng.uniform(-2.0, 2.0, s)  # noqa: E731
    return [
        Sample((x((5,)),)), Sample((x((2, 3, 4)),), {"dim": 1}),
        Sample((x((2, 3, 4)),), {"dim": (0, 2), "keepdim": True}),
        Sample((x((3, 4)),), {"dim": 1, "correction": 0}),
        Sample((x((3, 4)),), {"dim": 0, "correction": 2}),
        Sample((x((3, 4)),), {"dim": -1, "unbiased": False}),
        Sample((x((3, 4)),), {"unbiased": True}),
        Sample((x((4, 1)),), {"dim": 0, "keepdim": True}),
        Sample((np.full((2, 3), 1.5),), {"dim": 1}, gradcheck=False, note="constant"),
    ]


def _lse_samples(rng, info):
    x = lambda s: rng.uniform(-2.0, 2.0, s)  # noqa: E731
    return [
        Sample((x((5,)),), {"dim": 0}), Sample((x((2, 3, 4)),), {"dim": 1}),
        Sample((x((2, 3, 4)),), {"dim": (0, 2), "keepdim": True}),
        Sample((x(()),), {"dim": 0}, note="0d"),
        Sample((x((3, 4)),), {"dim": -1, "keepdim": True}),
        Sample((x((3, 4)) * 400.0,), {"dim": 1}, note="large"),
        Sample((np.array([[-np.inf, -np.inf], [0.5, -np.inf]]),), {"dim": 1},
               gradcheck=False, note="-inf"),
    ]


def _softmax_samples(rng, info):
    x = lambda s: rng.uniform(-2.0, 2.0, s)  # noqa: E731
    return [Sample((x((5,)),), {"dim": 0}), Sample((x((3, 4)),), {"dim": 1}),
            Sample((x((3, 4)),), {"dim": 0}), Sample((x((2, 3, 4)),), {"dim": -2}),
            Sample((x(()),), {"dim": 0}, note="0d"), Sample((x((1, 3)),), {"dim": 0}),
            Sample((x((2, 5)) * 300.0,), {"dim": 1}, note="large")]


HYP_VAR = hyp_reduce("tuple", extra=lambda draw: {"correction": draw(
    __import__("hypothesis").strategies.sampled_from([0, 1]))}, min_dims=1)


def _with_nans(rng, shape):
    """Distinct values with NaN at every 4th position (nansum, nanmean, nanquantile)."""
    a = SEPARATED.sample(rng, shape)
    flat = a.reshape(-1)
    flat[::4] = np.nan
    return flat.reshape(a.shape)


WITH_NANS = Domain("with nans", -3.0, 3.0, _with_nans)


# ---- cumprod ----------------------------------------------------------------------------
def _cumprod_samples(rng, info):
    x = lambda s: rng.uniform(0.5, 1.5, s) * rng.choice([-1.0, 1.0], s)  # noqa: E731
    out = [Sample((x(s),), {"dim": d}) for s, d in [((5,), 0), ((2, 3), 1), ((2, 3), 0),
                                                     ((), 0), ((3, 1, 4), -1), ((1,), 0)]]
    zs = [np.array([1.5, 0.0, 2.0, -0.5]), np.array([0.0, 1.5, 2.0]),
          np.array([1.5, 2.0, 0.0]), np.array([1.5, 0.0, 2.0, 0.0, 3.0]),
          np.array([[0.0, 0.0, 2.0], [1.0, 2.0, 0.0]]), np.array([0.0])]
    out += [Sample((z,), {"dim": -1}, note="zeros") for z in zs]
    out.append(Sample((np.array([[0.0, 1.5], [2.0, 0.0], [0.5, 3.0]]),), {"dim": 0},
                      note="zeros dim0"))
    return out


ENTRIES = [
    op("cumsum", lambda lib, x: lib.cumsum(x, 0), unary_samples([(), (5,), (2, 3), (3, 1, 4)]),
       hyp=None),
    op("cumsum", lambda lib, x: (x.cumsum(-1), x.cumsum(dim=0)), unary_samples([(2, 3), (4, 2)]),
       variant="methods"),
    # ---- reductions ----
    op("sum", lambda lib, x, **kw: lib.sum(x, **kw), _reduce_samples(), hyp=hyp_reduce("tuple")),
    op("sum", lambda lib, x: (x.sum(), x.sum(0), x.sum(-1, keepdim=True)),
       unary_samples([(3,), (2, 3), (1, 4)]), variant="method"),
    op("mean", lambda lib, x, **kw: lib.mean(x, **kw), _reduce_samples(),
       hyp=hyp_reduce("tuple")),
    op("prod", lambda lib, x, **kw: lib.prod(x, **kw), _reduce_samples(("none", "int")),
       hyp=hyp_reduce("one")),
    # zeros: the first-order rule must not divide by x; second order splits off the zeros
    op("prod", lambda lib, x, **kw: lib.prod(x, **kw), _with_zeros, variant="zeros"),
    op("max", lambda lib, x: lib.max(x), unary_samples([(), (3,), (2, 3)]),
       domain=SEPARATED, variant="full", covers=("amax",), hyp=E1),
    op("max", lambda lib, x: lib.max(x), _ties_full, variant="full_ties", covers=("amax",)),
    op("min", lambda lib, x: lib.min(x), unary_samples([(), (3,), (2, 3)]),
       domain=SEPARATED, variant="full", covers=("amin",), hyp=E1),
    op("min", lambda lib, x: lib.min(x), _ties_full, variant="full_ties", covers=("amin",)),
    op("max", lambda lib, x: (lib.max(x), lib.min(x)), _nan_full, variant="nan", covers=("min",)),
    op("amax", lambda lib, x, **kw: (lib.amax(x, **kw), lib.amin(x, **kw)), _nan_amax,
       variant="nan", covers=("amin",)),
    op("max_dim", lambda lib, x, **kw: tuple(lib.max(x, **kw)) + tuple(lib.min(x, **kw)),
       lambda rng, info: _nan_amax(rng, info)[:1], variant="nan", covers=("min_dim",)),
    op("max_dim", lambda lib, x, **kw: tuple(lib.max(x, **kw)), _max_dim_samples,
       hyp=hyp_reduce("required")),
    op("min_dim", lambda lib, x, **kw: tuple(lib.min(x, **kw)), _max_dim_samples,
       hyp=hyp_reduce("required")),
    op("amax", lambda lib, x, **kw: lib.amax(x, **kw), _amax_samples, hyp=hyp_reduce("tuple")),
    op("amin", lambda lib, x, **kw: lib.amin(x, **kw), _amax_samples, hyp=hyp_reduce("tuple")),
    op("var", lambda lib, x, **kw: lib.var(x, **kw), _var_samples, hyp=HYP_VAR, domain=SPREAD),
    op("std", lambda lib, x, **kw: lib.std(x, **kw), _var_samples, hyp=HYP_VAR, domain=SPREAD),
    op("var", lambda lib, x: (x.var(False), x.std(True), lib.var(x, 0, keepdim=True)),
       unary_samples([(5,), (3, 4)]), variant="positional_unbiased", covers=("std",)),
    op("logsumexp", lambda lib, x, **kw: lib.logsumexp(x, **kw), _lse_samples,
       hyp=hyp_reduce("required")),
    op("argmax", lambda lib, x, **kw: lib.argmax(x, **kw), _arg_samples, differentiable=False,
       hyp=hyp_reduce("one")),
    op("argmin", lambda lib, x, **kw: lib.argmin(x, **kw), _arg_samples, differentiable=False,
       hyp=hyp_reduce("one")),
    # ---- softmax ----
    op("softmax", lambda lib, x, **kw: lib.softmax(x, **kw), _softmax_samples,
       hyp=hyp_reduce("required", keepdim=False)),
    op("log_softmax", lambda lib, x, **kw: lib.log_softmax(x, **kw), _softmax_samples,
       hyp=hyp_reduce("required", keepdim=False)),
    op("diff", lambda lib, x, **kw: lib.diff(x, **kw), _shapes(
        (((5,),), {}), (((3, 4),), dict(dim=0)), (((3, 4),), dict(n=2)), (((2, 1, 3),), dict(dim=1)),
        (((4,),), dict(n=5)))),
    op("diff", lambda lib, x, p, a: lib.diff(x, dim=1, prepend=p, append=a),
       _shapes((((2, 3), (2, 1), (2, 2)), {})), variant="prepend_append"),
    op("quantile", lambda lib, x, **kw: lib.quantile(x, 0.3, **kw), _shapes(
        (((7,),), {}), (((3, 4),), dict(dim=1)), (((3, 4),), dict(dim=0, keepdim=True)),
        (((2, 3, 2),), dict(dim=None, keepdim=True)), (((),), {}), (((1, 5),), dict(dim=-1))),
       domain=SEPARATED),
    op("quantile", lambda lib, x, **kw: x.quantile(lib.tensor([0.0, 0.25, 0.5, 1.0],
                                                              dtype=x.dtype), **kw),
       _shapes((((5,),), {}), (((3, 4),), dict(dim=1)), (((3, 4),), dict(dim=0, keepdim=True))),
       domain=SEPARATED, variant="q_tensor"),
    *[op("quantile", (lambda m: lambda lib, x: lib.quantile(x, 0.4, dim=1, interpolation=m))(m),
         _shapes((((2, 6),), {})), domain=SEPARATED, variant=m)
      for m in ("lower", "higher", "midpoint", "nearest")],
    op("nanquantile", lambda lib, x, **kw: lib.nanquantile(x, 0.6, **kw), _shapes(
        (((9,),), {}), (((3, 5),), dict(dim=1)), (((3, 5),), dict(dim=0, keepdim=True))),
       domain=WITH_NANS),
    op("trapezoid", lambda lib, y, **kw: lib.trapezoid(y, **kw), _shapes(
        (((5,),), {}), (((3, 4),), dict(dim=0)), (((2, 3),), dict(dx=0.5)), (((1, 2),), {}))),
    op("trapezoid", lambda lib, y, x: lib.trapezoid(y, x), _shapes(
        (((3, 4), (4,)), {}), (((2, 4), (2, 4)), {}), (((5,), (5,)), {})), variant="x"),
    op("trapz", lambda lib, y: lib.trapz(y, dx=2.0, dim=0), _shapes((((3, 2),), {}))),
    op("std_mean", lambda lib, x, **kw: lib.std_mean(x, **kw), _shapes(
        (((5,),), {}), (((3, 4),), dict(dim=1)), (((3, 4),), dict(dim=0, keepdim=True)),
        (((2, 3),), dict(dim=1, correction=0)))),
    op("var_mean", lambda lib, x, **kw: lib.var_mean(x, **kw), _shapes(
        (((5,),), {}), (((3, 4),), dict(dim=(0, 1))), (((2, 1, 3),), dict(dim=2, unbiased=False)))),
    op("nansum", lambda lib, x, **kw: lib.nansum(x, **kw), _shapes(
        (((7,),), {}), (((3, 4),), dict(dim=1)), (((3, 4),), dict(dim=0, keepdim=True)),
        (((),), {})), domain=WITH_NANS),
    op("nanmean", lambda lib, x, **kw: x.nanmean(**kw), _shapes(
        (((7,),), {}), (((3, 4),), dict(dim=1)), (((2, 3, 4),), dict(dim=(0, 2), keepdim=True))),
       domain=WITH_NANS),
    op("dist", lambda lib, a, b, **kw: lib.dist(a, b, **kw), _shapes(
        (((3,), (3,)), {}), (((2, 3), (3,)), dict(p=1.5)), (((2, 1), (1, 3)), dict(p=3)),
        (((), ()), dict(p=2.0))), domain=APART),
    op("cummax", lambda lib, x, **kw: tuple(lib.cummax(x, **kw)), _shapes(
        (((6,),), dict(dim=0)), (((3, 4),), dict(dim=1)), (((3, 4),), dict(dim=-2)),
        (((),), dict(dim=0)), (((2, 1, 3),), dict(dim=1))), domain=SEPARATED),
    op("cummin", lambda lib, x, **kw: tuple(x.cummin(**kw)), _shapes(
        (((6,),), dict(dim=0)), (((3, 4),), dict(dim=0))), domain=SEPARATED),
    op("aminmax", lambda lib, x, **kw: tuple(lib.aminmax(x, **kw)), _shapes(
        (((6,),), {}), (((3, 4),), dict(dim=1)), (((3, 4),), dict(dim=0, keepdim=True)),
        (((2, 3),), dict(keepdim=True)), (((),), {}), (((1, 3),), dict(dim=-1))), domain=SEPARATED),
    op("amax", lambda lib, x, **kw: lib.linalg.matrix_norm(x, **kw),
       _matrix_samples([1, -1, np.inf, -np.inf]), domain=SEPARATED, variant="matrix_norm",
       covers=("amin",)),
    # ---- cumprod ----
    op("cumprod", lambda lib, x, **kw: lib.cumprod(x, **kw), _cumprod_samples),
    op("cumprod", lambda lib, x: (x.cumprod(0), x.cumprod(dim=-1)), unary_samples([(2, 3)]),
       variant="methods"),
    # ---- logcumsumexp (a logaddexp scan; torch's log-space backward) ----
    op("logcumsumexp", lambda lib, x, **kw: lib.logcumsumexp(x, **kw), _shapes(
        (((6,),), dict(dim=0)), (((3, 4),), dict(dim=1)), (((),), dict(dim=0)),
        (((2, 3, 4),), dict(dim=-2)), (((1, 4),), dict(dim=0)))),
    op("logcumsumexp", lambda lib, x: (x.logcumsumexp(0) * 1.0, (x * 300.0).logcumsumexp(-1)),
       unary_samples([(3, 4)]), variant="wide_range", f32_tol=(1e-4, 1e-5)),  # values ~600
    # ---- cov / corrcoef / cumulative_trapezoid / gradient (compositions) ----
    op("matmul", lambda lib, x: (lib.cov(x), lib.cov(x, correction=0)),
       unary_samples([(3, 5), (5,), (1, 4)]), variant="cov"),
    op("matmul", lambda lib, x, w: lib.cov(x, aweights=w.abs() + 0.1),
       _shapes((((2, 5), (5,)), {})), variant="cov_aweights"),
    op("matmul", lambda lib, x: lib.corrcoef(x), unary_samples([(3, 5), (2, 4)]),
       variant="corrcoef", covers=("sqrt", "clamp")),
    op("cumsum", lambda lib, y, **kw: lib.cumulative_trapezoid(y, **kw), _shapes(
        (((5,),), {}), (((3, 4),), dict(dim=0)), (((2, 3),), dict(dx=0.5))),
       variant="cumulative_trapezoid"),
    op("cumsum", lambda lib, y, x: lib.cumulative_trapezoid(y, x), _shapes(
        (((2, 4), (4,)), {}), (((2, 4), (2, 4)), {})), variant="cumulative_trapezoid_x"),
    op("cat", lambda lib, x, **kw: lib.gradient(x, **kw), _shapes(
        (((5,),), {}), (((4, 5),), dict(spacing=2.0)), (((4, 5),), dict(edge_order=2)),
        (((3, 4),), dict(dim=1, spacing=[0.5])), (((3, 4, 3),), dict(dim=(0, 2), edge_order=2))),
       variant="gradient"),
]
