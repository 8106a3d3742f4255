"""Op-database entries: matrix and tensor products: matmul, addmv, addr, baddbmm, addbmm,
inner, vdot, tensordot, kron, einsum, cdist.

Values and gradients against torch in float64 and float32, gradcheck, second order,
hypothesis where `hyp` is set (tests/test_opdb.py), forward mode (tests/test_forward_mode.py).
"""
from _opinfo import SEPARATED, SMALL, Sample, op
from opdb.samples import _shaped_samples, _shapes


MATMUL_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4)),
                 ((2, 2, 3), (3, 4)), ((3,), (2, 3, 4)), ((2, 3, 4), (4,)),
                 ((2, 1, 2, 3), (3, 3, 2)), ((1, 2, 3), (4, 3, 2)), ((1, 1), (1, 1))]


def _matmul_samples(rng, info):
    return [Sample((rng.uniform(-1, 1, a), rng.uniform(-1, 1, b))) for a, b in MATMUL_SHAPES]


def _hyp_matmul(draw, info):
    from hypothesis import strategies as st
    m, k, n = (draw(st.integers(1, 4)) for _ in range(3))
    bx = draw(st.sampled_from([(), (2,), (1,), (3, 1)]))
    by = draw(st.sampled_from([(), (2,), (1,), (1, 2)]))
    xs = draw(st.sampled_from([(k,), bx + (m, k)]))
    ys = draw(st.sampled_from([(k,), by + (k, n)]))
    from _opinfo import draw_array
    return Sample((draw_array(draw, xs, SMALL), draw_array(draw, ys, SMALL)))


# ---- einsum -----------------------------------------------------------------------------
_EINSUM = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("bhqd,bhkd->bhqk", [(2, 2, 3, 4), (2, 2, 5, 4)]),
    ("ii->i", [(3, 3)]), ("ii", [(3, 3)]), ("ij->", [(2, 3)]), ("i,i->", [(4,), (4,)]),
    ("i,j->ij", [(3,), (2,)]), ("ij->ji", [(2, 3)]), ("ij", [(2, 3)]), ("ba", [(2, 3)]),
    ("bij,bjk", [(2, 2, 3), (2, 3, 2)]), ("ijk,ik->j", [(2, 3, 4), (2, 4)]),
    ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 2)]), ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]),
    ("i...,i...->...", [(3, 2), (3, 1)]), ("...ii->...i", [(2, 3, 3)]),
    ("ij,ij->ij", [(2, 1), (2, 3)]), ("iij->j", [(2, 2, 3)]), ("ij,jj->i", [(2, 3), (3, 3)]),
    ("i->i", [(3,)]), ("b i d, b j d -> b i j", [(2, 3, 2), (2, 4, 2)]),
    ("Ab,bC->AC", [(2, 3), (3, 2)]),
]


def _einsum_samples(rng, info):
    return [Sample(tuple(rng.uniform(-1.0, 1.0, s) for s in shapes), {"eq": eq})
            for eq, shapes in _EINSUM]


ENTRIES = [
    # ---- matmul ----
    op("matmul", lambda lib, x, y: lib.matmul(x, y), _matmul_samples, hyp=_hyp_matmul),
    op("matmul", lambda lib, x, y: x @ y, _matmul_samples, variant="operator"),
    op("matmul", lambda lib, x, y: (lib.mm(x, y), lib.dot(x.sum(0), y.sum(1))),
       lambda rng, info: [Sample((rng.standard_normal((2, 3)), rng.standard_normal((3, 4))))],
       variant="mm_dot"),
    op("matmul", lambda lib, x, y: lib.bmm(x, y),
       lambda rng, info: [Sample((rng.standard_normal((2, 2, 3)),
                                  rng.standard_normal((2, 3, 4))))], variant="bmm"),
    op("cdist", lambda lib, a, b, **kw: lib.cdist(a, b, **kw), _shapes(
        (((3, 2), (4, 2)), {}), (((2, 3, 4), (2, 5, 4)), {}), (((2, 3), (1, 3)), dict(p=1.0)),
        (((1, 2, 3), (3, 2, 3)), dict(p=3.0)), (((4, 1), (2, 1)), dict(p=2.0))),
       # torch has no second derivative of cdist ("_cdist_backward" is not implemented)
       domain=SEPARATED, covers=("vector_norm",), gradgrad=False),
    op("kron", lambda lib, a, b: lib.kron(a, b), _shapes(
        (((2,), (3,)), {}), (((2, 3), (2, 2)), {}), (((2, 1, 2), (3, 2)), {}), (((), (3,)), {}),
        (((1, 2), (2, 1)), {}))),
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
    # ---- einsum ----
    op("einsum", lambda lib, *xs, eq: lib.einsum(eq, *xs), _einsum_samples),
    op("einsum", lambda lib, x, y: lib.einsum("ij,jk->ik", [x, y]),
       _shaped_samples((((2, 3), (3, 4)), {})), variant="list"),
]
