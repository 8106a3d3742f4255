"""Op-database entries for the compositions of ops/functions_more2.py, 3 and 4: xlogy,
hypot, deg2rad, rad2deg, sinc, exp2, logit, copysign, fmax, fmin, addmv, addr, baddbmm,
addbmm, inner, vdot, tensordot, dist, renorm, diagflat, block_diag, cosine_similarity,
pairwise_distance, combinations, split_with_sizes, atleast_1d/2d/3d, scatter_reduce
(sum, prod, mean, amax, amin), cummax, cummin, aminmax, fill_diagonal_, as_strided (values and
gradients against torch in float64 and float32, gradcheck, second order:
tests/test_opdb.py). Shapes include 0-d, size-1 dims and broadcasting where the op has
them; index arguments are written in the lambdas with `lib.tensor(...)`.
"""
from _opinfo import (NONZERO, POSITIVE, REAL, SEPARATED, SEPARATED_OFF, Domain, binary_samples,
                     hyp_elementwise, op, unary_samples)
from opdb_methods2 import _shapes

UNIT = Domain("(0, 1)", 0.05, 0.95, lambda rng, s: rng.uniform(0.1, 0.9, s))
# sinc: away from 0, where torch's second derivative is a limit
AWAY0 = Domain("away from 0", -3.0, 3.0,
               lambda rng, s: rng.choice([-1.0, 1.0], s) * rng.uniform(0.2, 2.0, s))
# renorm: rows of norms on both sides of maxnorm = 1.5
ROWS = Domain("rows", -3.0, 3.0, lambda rng, s: rng.uniform(-1.5, 1.5, s))

E1, E2 = hyp_elementwise(1), hyp_elementwise(2)  # hypothesis: random broadcast shapes
# two operands that never meet (fmax's ties, dist's kink at 0)
APART = (SEPARATED, SEPARATED_OFF)
# scatter_reduce's index (dim 0 of a (3, 4) self, from a (2, 4) src)
_IDX = [[0, 2, 2, 1], [2, 0, 2, 1]]


def _scatter(reduce, include_self):
    return lambda lib, x, s: x.scatter_reduce(0, lib.tensor(_IDX), s, reduce,
                                              include_self=include_self)


ENTRIES = [
    op("xlogy", lambda lib, x, y: lib.xlogy(x, y), binary_samples(),
       domain=(REAL, POSITIVE), hyp=E2),
    op("xlogy", lambda lib, x, y: x.xlogy(y) + lib.xlogy(2.0, y), _shapes(
        (((2, 3), (3,)), {})), domain=(REAL, POSITIVE), variant="number"),
    op("hypot", lambda lib, x, y: lib.hypot(x, y), binary_samples(), domain=NONZERO, hyp=E2),
    op("deg2rad", lambda lib, x: lib.deg2rad(x), unary_samples(), hyp=E1),
    op("rad2deg", lambda lib, x: x.rad2deg(), unary_samples()),
    op("sinc", lambda lib, x: lib.sinc(x), unary_samples(), domain=AWAY0, hyp=E1,
       # near 0 the float32 gradient is a difference of near-equal terms in both libraries
       # (each in its own order): a few 1e-5 apart relatively
       f32_tol=(1e-3, 1e-5)),
    op("exp2", lambda lib, x: x.exp2(), unary_samples(), hyp=E1),
    op("logit", lambda lib, x: lib.logit(x), unary_samples(), domain=UNIT, hyp=E1),
    op("logit", lambda lib, x: x.logit(eps=0.2), unary_samples(), domain=UNIT, variant="eps",
       gradgrad=False),  # torch's logit_backward with eps has no second derivative
    op("copysign", lambda lib, x, y: lib.copysign(x, y), binary_samples(), domain=NONZERO,
       hyp=E2),
    op("copysign", lambda lib, x: x.copysign(-1.0), unary_samples(), domain=NONZERO,
       variant="number"),
    op("fmax", lambda lib, x, y: lib.fmax(x, y), binary_samples(), domain=APART, hyp=E2),
    op("fmin", lambda lib, x, y: x.fmin(y), binary_samples(), domain=APART, hyp=E2),
    op("addmv", lambda lib, x, m, v, **kw: lib.addmv(x, m, v, **kw), _shapes(
        (((3,), (3, 2), (2,)), {}), (((1,), (3, 2), (2,)), dict(beta=0.5, alpha=2.0)),
        (((), (2, 4), (4,)), dict(beta=0.0)))),
    op("addr", lambda lib, x, a, b, **kw: x.addr(a, b, **kw), _shapes(
        (((3, 2), (3,), (2,)), {}), (((2,), (3,), (2,)), dict(beta=2.0, alpha=-1.0)),
        (((), (1,), (4,)), {}))),
    op("baddbmm", lambda lib, x, a, b, **kw: lib.baddbmm(x, a, b, **kw), _shapes(
        (((2, 3, 4), (2, 3, 2), (2, 2, 4)), {}), (((3, 1), (2, 3, 2), (2, 2, 4)),
                                                  dict(alpha=0.5, beta=-1.0)))),
    op("addbmm", lambda lib, x, a, b, **kw: x.addbmm(a, b, **kw), _shapes(
        (((3, 4), (2, 3, 2), (2, 2, 4)), {}), (((4,), (1, 3, 2), (1, 2, 4)), dict(alpha=2.0)))),
    op("inner", lambda lib, a, b: lib.inner(a, b), _shapes(
        (((3,), (3,)), {}), (((2, 3), (4, 3)), {}), (((2, 1, 3), (3,)), {}), (((), (2, 3)), {}))),
    op("vdot", lambda lib, a, b: a.vdot(b), _shapes((((4,), (4,)), {}), (((1,), (1,)), {}))),
    op("tensordot", lambda lib, a, b, **kw: lib.tensordot(a, b, **kw), _shapes(
        (((2, 3, 4), (3, 4, 2)), {}), (((2, 3), (3, 2)), dict(dims=1)),
        (((2, 3, 4), (4, 2, 3)), dict(dims=([1, 2], [2, 0]))), (((2,), (3,)), dict(dims=0)),
        (((1, 3), (3, 1)), dict(dims=([1], [0]))))),
    op("dist", lambda lib, a, b, **kw: lib.dist(a, b, **kw), _shapes(
        (((3,), (3,)), {}), (((2, 3), (3,)), dict(p=1.5)), (((2, 1), (1, 3)), dict(p=3)),
        (((), ()), dict(p=2.0))), domain=APART),
    op("renorm", lambda lib, x, **kw: x.renorm(**kw), _shapes(
        (((3, 4),), dict(p=2, dim=0, maxnorm=1.5)), (((3, 4),), dict(p=1, dim=1, maxnorm=1.5)),
        (((2, 3, 2),), dict(p=3, dim=-1, maxnorm=1.5)), (((1, 4),), dict(p=2, dim=0, maxnorm=0.5))),
       domain=ROWS),
    op("diagflat", lambda lib, x, **kw: lib.diagflat(x, **kw), _shapes(
        (((3,),), {}), (((2, 2),), dict(offset=1)), (((),), dict(offset=-2)))),
    op("block_diag", lambda lib, *ts: lib.block_diag(*ts), _shapes(
        (((2, 3), (), (2,), (1, 1)), {}), (((2, 2),), {}))),
    op("cosine_similarity", lambda lib, a, b, **kw: lib.cosine_similarity(a, b, **kw), _shapes(
        (((3, 4), (3, 4)), {}), (((2, 3, 4), (3, 4)), dict(dim=-1)), (((4,), (4,)), dict(dim=0)),
        (((2, 1, 3), (1, 4, 3)), dict(dim=2)))),
    op("pairwise_distance", lambda lib, a, b, **kw: lib.pairwise_distance(a, b, **kw), _shapes(
        (((3, 4), (3, 4)), {}), (((2, 3, 4), (3, 4)), dict(p=1.0)),
        (((4,), (4,)), dict(keepdim=True)),
        (((3, 2), (1, 2)), dict(p=3.0, eps=0.0))), domain=APART),
    op("combinations", lambda lib, x, **kw: lib.combinations(x, **kw), _shapes(
        (((4,),), {}), (((4,),), dict(r=3)), (((3,),), dict(with_replacement=True)),
        (((1,),), dict(r=1)))),
    op("split_with_sizes", lambda lib, x, **kw: x.split_with_sizes(**kw), _shapes(
        (((5, 2),), dict(split_sizes=[2, 0, 3])), (((2, 3),), dict(split_sizes=[1, 2], dim=1)))),
    *[op(f"atleast_{n}d", (lambda n: lambda lib, *ts: getattr(lib, f"atleast_{n}d")(*ts))(n),
         _shapes((((), (3,), (2, 3), (1, 2, 1)), {}), (((),), {})))
      for n in (1, 2, 3)],
    # src larger than index: torch's own backward fails ("invalid gradient ... [2, 4]")
    *[op("scatter_reduce", _scatter(r, inc), _shapes((((3, 4), (2, 4)), {})),
         domain=SEPARATED, variant=f"{r}{'' if inc else '_exclude_self'}")
      for r in ("sum", "mean", "amax", "amin") for inc in (True, False)],
    *[op("scatter_reduce", _scatter("prod", inc), _shapes((((3, 4), (2, 4)), {})),
         domain=NONZERO, variant=f"prod{'' if inc else '_exclude_self'}") for inc in (True, False)],
    op("scatter_reduce", lambda lib, x, s: lib.scatter_reduce(
        x, 1, lib.tensor([[1, 1], [0, 1]]), s, "amax"), _shapes((((2, 3), (2, 2)), {})),
       domain=SEPARATED, variant="dim1"),
    op("scatter_reduce", lambda lib, x, s: x.clone().scatter_reduce_(
        0, lib.tensor(_IDX), s, "mean", include_self=False), _shapes((((3, 4), (2, 4)), {})),
       variant="in_place"),
    op("cummax", lambda lib, x, **kw: tuple(lib.cummax(x, **kw)), _shapes(
        (((6,),), dict(dim=0)), (((3, 4),), dict(dim=1)), (((3, 4),), dict(dim=-2)),
        (((),), dict(dim=0)), (((2, 1, 3),), dict(dim=1))), domain=SEPARATED),
    op("cummin", lambda lib, x, **kw: tuple(x.cummin(**kw)), _shapes(
        (((6,),), dict(dim=0)), (((3, 4),), dict(dim=0))), domain=SEPARATED),
    op("aminmax", lambda lib, x, **kw: tuple(lib.aminmax(x, **kw)), _shapes(
        (((6,),), {}), (((3, 4),), dict(dim=1)), (((3, 4),), dict(dim=0, keepdim=True)),
        (((2, 3),), dict(keepdim=True)), (((),), {}), (((1, 3),), dict(dim=-1))), domain=SEPARATED),
    op("fill_diagonal_", lambda lib, x, **kw: (x * 1).fill_diagonal_(**kw), _shapes(
        (((3, 3),), dict(fill_value=2.5)), (((2, 4),), dict(fill_value=-1.0)),
        (((7, 3),), dict(fill_value=0.0, wrap=True)), (((2, 2, 2),), dict(fill_value=1)))),
    op("as_strided", lambda lib, x: lib.as_strided(x, (3, 3), (2, 1), 1), _shapes(
        (((3, 4),), {}), (((12,),), {}))),
    op("as_strided", lambda lib, x: x.as_strided((2, 2, 2), (0, 1, 3)), _shapes(
        (((2, 3),), {}), (((6,),), {})), variant="overlapping"),
    op("true_divide", lambda lib, a, b: a.true_divide(b), binary_samples(), domain=(REAL, NONZERO)),
]
