"""Op-database entries for the compositions of ops/functions_more.py: Tensor.unfold,
diff, take, index_fill, index_copy, masked_scatter, quantile, nanquantile, cdist,
trapezoid, std_mean, var_mean, rot90, logaddexp, logaddexp2, kron, nansum, nanmean, frac
(values and gradients against torch in float64 and float32, gradcheck, second order:
tests/test_opdb.py). Shapes include 0-d, size-1 dims and broadcasting where the op has
them. Index and mask arguments are written in the lambdas with `lib.tensor(...)`.
"""
import numpy as np

from _opinfo import REAL, SEPARATED, Domain, Sample, binary_samples, op, unary_samples


def _shapes(*specs):
    """specs: (shapes tuple, kwargs) -> one sample each, values from the entry's domains."""
    def gen(rng, info):
        return [Sample(tuple(info.domain_for(i).sample(rng, s) for i, s in enumerate(shapes)),
                       dict(kw)) for shapes, kw in specs]
    return gen


def _with_nans(rng, shape):
    """Distinct values with NaN at every 4th position (nansum, nanmean, nanquantile)."""
    a = SEPARATED.sample(rng, shape)
    flat = a.reshape(-1)
    flat[::4] = np.nan
    return flat.reshape(a.shape)


WITH_NANS = Domain("with nans", -3.0, 3.0, _with_nans)
# frac: away from the integers, where trunc jumps
NON_INTEGER = Domain("non-integer", -3.0, 3.0,
                     lambda rng, s: np.floor(rng.uniform(-3, 3, s)) + rng.uniform(0.1, 0.9, s))


ENTRIES = [
    op("unfold", lambda lib, x, **kw: x.unfold(**kw), _shapes(
        (((7,),), dict(dimension=0, size=3, step=2)), (((7,),), dict(dimension=0, size=7, step=1)),
        (((2, 6, 3),), dict(dimension=1, size=2, step=1)),
        (((2, 5),), dict(dimension=-1, size=1, step=3)), (((4, 1),), dict(dimension=1, size=1, step=1)),
        (((),), dict(dimension=0, size=1, step=1))), covers=("index_select",)),
    op("diff", lambda lib, x, **kw: lib.diff(x, **kw), _shapes(
        (((5,),), {}), (((3, 4),), dict(dim=0)), (((3, 4),), dict(n=2)), (((2, 1, 3),), dict(dim=1)),
        (((4,),), dict(n=5)))),
    op("diff", lambda lib, x, p, a: lib.diff(x, dim=1, prepend=p, append=a),
       _shapes((((2, 3), (2, 1), (2, 2)), {})), variant="prepend_append"),
    op("take", lambda lib, x: lib.take(x, lib.tensor([[0, 5], [-1, 2]])),
       _shapes((((2, 3),), {}), (((6,),), {}))),
    op("take", lambda lib, x: x.take(lib.tensor(0)), _shapes((((),), {}), (((1, 1),), {})),
       variant="0-d"),
    op("index_fill", lambda lib, x: x.index_fill(1, lib.tensor([0, 2]), -1.5),
       _shapes((((2, 3),), {}), (((1, 4, 2),), {}))),
    op("index_fill", lambda lib, x, v: lib.index_fill(x, 0, lib.tensor([1]), v),
       _shapes((((3, 2), ()), {})), variant="tensor_value"),
    op("index_copy", lambda lib, x, s: x.index_copy(1, lib.tensor([2, 0]), s),
       _shapes((((3, 4), (3, 2)), {}), (((1, 3), (1, 2)), {}))),
    op("masked_scatter", lambda lib, x, s: x.masked_scatter(
        lib.tensor([[True, False, True], [False, True, True]]), s),
       _shapes((((2, 3), (5,)), {}), (((2, 3), (2, 3)), {}))),
    op("masked_scatter", lambda lib, x, s: x.masked_scatter(lib.tensor([False, True, True]), s),
       _shapes((((2, 3), (3, 2)), {})), variant="broadcast_mask"),
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
    op("cdist", lambda lib, a, b, **kw: lib.cdist(a, b, **kw), _shapes(
        (((3, 2), (4, 2)), {}), (((2, 3, 4), (2, 5, 4)), {}), (((2, 3), (1, 3)), dict(p=1.0)),
        (((1, 2, 3), (3, 2, 3)), dict(p=3.0)), (((4, 1), (2, 1)), dict(p=2.0))),
       # torch has no second derivative of cdist ("_cdist_backward" is not implemented)
       domain=SEPARATED, covers=("vector_norm",), gradgrad=False),
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
    op("rot90", lambda lib, x, **kw: lib.rot90(x, **kw), _shapes(
        (((2, 3),), {}), (((2, 3),), dict(k=2)), (((2, 3),), dict(k=3)), (((2, 3),), dict(k=-1)),
        (((2, 3, 4),), dict(k=1, dims=(2, 0))), (((1, 3),), dict(k=4)))),
    op("logaddexp", lambda lib, a, b: lib.logaddexp(a, b), binary_samples()),
    op("logaddexp2", lambda lib, a, b: a.logaddexp2(b), binary_samples()),
    op("kron", lambda lib, a, b: lib.kron(a, b), _shapes(
        (((2,), (3,)), {}), (((2, 3), (2, 2)), {}), (((2, 1, 2), (3, 2)), {}), (((), (3,)), {}),
        (((1, 2), (2, 1)), {}))),
    op("nansum", lambda lib, x, **kw: lib.nansum(x, **kw), _shapes(
        (((7,),), {}), (((3, 4),), dict(dim=1)), (((3, 4),), dict(dim=0, keepdim=True)),
        (((),), {})), domain=WITH_NANS),
    op("nanmean", lambda lib, x, **kw: x.nanmean(**kw), _shapes(
        (((7,),), {}), (((3, 4),), dict(dim=1)), (((2, 3, 4),), dict(dim=(0, 2), keepdim=True))),
       domain=WITH_NANS),
    op("frac", lambda lib, x: lib.frac(x), unary_samples(), domain=NON_INTEGER),
]
