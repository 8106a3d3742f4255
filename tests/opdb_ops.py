"""Op-database entries for issue 12 item 4's functions: erf/erfc/erfinv, round, norms
(vector_norm, svdvals), diagonals, einsum, cumprod, median, nan_to_num, meshgrid.

Each entry runs the same call in tapegrad and torch (values and gradients in float64
and float32, float64 gradcheck, second order, forward mode: tests/test_opdb.py and
tests/test_forward_mode.py).
"""
import numpy as np

from _opinfo import SEPARATED, Domain, Sample, hyp_elementwise, op, unary_samples

E1 = hyp_elementwise(1)
OPEN_UNIT = Domain("open unit", -0.9, 0.9, lambda rng, s: rng.uniform(-0.9, 0.9, s))
WIDE = np.concatenate([np.linspace(-6.0, 6.0, 49), [-27.0, -9.5, 9.5, 27.0, 1e-8, -1e-300]])


def _fixed(*arrays, **kw):
    return lambda rng, info: [Sample(tuple(arrays), dict(kw), gradcheck=False, note="fixed")]


def _samples(*specs):
    """specs: (shapes tuple, kwargs) pairs drawn from the entry's domain."""
    def gen(rng, info):
        return [Sample(tuple(info.domain_for(i).sample(rng, s) for i, s in enumerate(shapes)),
                       dict(kw)) for shapes, kw in specs]
    return gen


# ---- vector norms -----------------------------------------------------------------------
_NORM_SPECS = [(((5,),), {}), (((2, 3, 4),), {}), (((),), {}),
               (((3, 4),), {"dim": 1}), (((3, 4),), {"dim": 0, "keepdim": True}),
               (((2, 3, 4),), {"dim": (0, 2)}), (((2, 3, 4),), {"dim": (-1, 1), "keepdim": True})]


def _norm_samples(ords):
    def gen(rng, info):
        out = []
        for o in ords:
            for (shapes, kw) in _NORM_SPECS:
                out.append(Sample((SEPARATED.sample(rng, shapes[0]),), {"ord": o, **kw}))
        return out
    return gen


def _norm_zero_samples(rng, info):
    z = np.zeros((2, 3))
    z[1] = [0.5, -1.0, 2.0]
    return [Sample((z,), {"ord": o, "dim": 1}, gradcheck=False, note="zero row")
            for o in (2, 1, 3.0, 1.5, np.inf, 0.5)] + \
        [Sample((np.zeros(3),), {"ord": 2}, gradcheck=False, note="zero vector")]


def _matrix_samples(ords, shapes=((3, 4), (2, 3, 3), (4, 2))):
    def gen(rng, info):
        return [Sample((rng.uniform(-1.0, 1.0, s),), {"ord": o}) for o in ords for s in shapes]
    return gen


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


# ---- median -----------------------------------------------------------------------------
def _median_samples(rng, info):
    d = SEPARATED
    return [Sample((d.sample(rng, (5,)),)), Sample((d.sample(rng, (2, 3)),)),
            Sample((d.sample(rng, (4,)),), note="even"), Sample((d.sample(rng, ()),)),
            Sample((d.sample(rng, (3, 4)),), {"dim": 1}),
            Sample((d.sample(rng, (3, 4)),), {"dim": 0, "keepdim": True}),
            Sample((d.sample(rng, (2, 3, 5)),), {"dim": -1}),
            Sample((d.sample(rng, ()),), {"dim": 0}, note="0d")]


def _nan_median_samples(rng, info, all_nan=True):
    x = np.array([[1.0, np.nan, 3.0, 0.5], [np.nan, np.nan, np.nan, np.nan],
                  [2.0, -1.0, 4.0, 0.25]])
    # (nanmedian's index in an all-NaN row is torch's implementation detail: not compared)
    return [Sample((x if all_nan else x[[0, 2]],), {"dim": 1}, gradcheck=False, note="nan"),
            Sample((x[2:],), {}, gradcheck=False, note="no nan"),
            Sample((x[:1],), {}, gradcheck=False, note="nan")]


def _median_pair(lib, x, **kw):
    r = lib.median(x, **kw)
    return tuple(r) if "dim" in kw else r


def _nanmedian_pair(lib, x, **kw):
    r = lib.nanmedian(x, **kw)
    return tuple(r) if "dim" in kw else r


def _flat(r):
    return tuple(r) if isinstance(r, tuple) else (r,)


_NAN_INF = np.array([1.5, np.nan, np.inf, -np.inf, -0.5])

ENTRIES = [
    # ---- special functions ----
    op("erf", lambda lib, x: lib.erf(x), unary_samples(), hyp=E1),
    op("erf", lambda lib, x: (x.erf(), x.erfc(), (x * 0.4).erfinv()), unary_samples([(2, 3)]),
       variant="methods", covers=("erfc", "erfinv")),
    op("erf", lambda lib, x: lib.erf(x), lambda rng, info: [Sample((WIDE,), note="wide")],
       variant="wide"),
    op("erfc", lambda lib, x: lib.erfc(x), unary_samples(), hyp=E1),
    op("erfc", lambda lib, x: x.erfc(), lambda rng, info: [Sample((WIDE,), note="wide")],
       variant="wide"),
    op("erfinv", lambda lib, x: lib.erfinv(x), unary_samples(), domain=OPEN_UNIT, hyp=E1),
    op("erfinv", lambda lib, x: x.erfinv(),
       lambda rng, info: [Sample((np.array([-0.999999, -0.75, -1e-9, 0.0, 0.3, 0.5, 0.51,
                                            0.9999]),), note="edges")],
       variant="edges", gradcheck_kw={"eps": 1e-9, "atol": 1e-4, "rtol": 1e-4}),
    op("round", lambda lib, x: lib.round(x), unary_samples(), domain=SEPARATED, hyp=E1),
    op("round", lambda lib, x, **kw: lib.round(x * 3.0, **kw), unary_samples([(5,), (2, 3)],
                                                                          decimals=1),
       domain=SEPARATED, variant="decimals"),
    op("round", lambda lib, x: (x.round(), (x * 40.0).round(decimals=-1)),
       lambda rng, info: [Sample((np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.0625, 0.1375]),),
                                 gradcheck=False, note="halves")],
       variant="half_even"),
    # ---- bernoulli: probabilities 0 and 1 draw the same in both libraries; gradient 0 ----
    op("bernoulli", lambda lib, x: lib.bernoulli(x) * x,
       _fixed(np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])), variant="certain"),
    # ---- nan_to_num (where) ----
    op("where", lambda lib, x: lib.nan_to_num(x), unary_samples([(3,), (2, 3)]),
       variant="nan_to_num"),
    op("where", lambda lib, x: (lib.nan_to_num(x), x.nan_to_num(nan=2.0, posinf=9.0,
                                                               neginf=-9.0)),
       _fixed(_NAN_INF), variant="nan_to_num_nan"),
    # ---- norms ----
    op("vector_norm", lambda lib, x, **kw: lib.linalg.vector_norm(x, **kw),
       _norm_samples([2, 1, 3, 1.5, 0.5, np.inf, -np.inf, 0]), hyp=None),
    op("vector_norm", lambda lib, x, **kw: lib.linalg.vector_norm(x, **kw), _norm_zero_samples,
       variant="zeros", gradgrad=False),
    op("vector_norm", lambda lib, x: (lib.norm(x), x.norm(), x.norm(1), x.norm(p=3, dim=-1),
                                      lib.norm(x, dim=0, keepdim=True),
                                      x.norm("fro", dim=(0, 1)), lib.linalg.norm(x),
                                      lib.linalg.norm(x, dim=1), lib.linalg.norm(x, 3, dim=1),
                                      lib.linalg.norm(x, "fro"),
                                      lib.linalg.matrix_norm(x),
                                      lib.linalg.norm(x.reshape(-1), np.inf)),
       unary_samples([(3, 4), (2, 2)]), domain=SEPARATED, variant="norm_functions"),
    op("amax", lambda lib, x, **kw: lib.linalg.matrix_norm(x, **kw),
       _matrix_samples([1, -1, np.inf, -np.inf]), domain=SEPARATED, variant="matrix_norm",
       covers=("amin",)),
    op("svdvals", lambda lib, x: lib.linalg.svdvals(x),
       lambda rng, info: [Sample((rng.uniform(-1.0, 1.0, s),))
                          for s in [(3, 4), (2, 3, 3), (4, 2)]],
       gradgrad=False),
    op("svdvals", lambda lib, x, **kw: lib.linalg.matrix_norm(x, **kw),
       _matrix_samples(["nuc", 2, -2]), variant="matrix_norm", gradgrad=False),
    op("svdvals", lambda lib, x: (x.norm(p="nuc"), lib.linalg.norm(x, "nuc"),
                                  lib.linalg.norm(x, 2), lib.norm(x, "nuc", dim=(1, 0))),
       unary_samples([(3, 4)]), variant="norm_functions", gradgrad=False),
    # ---- diagonals ----
    op("diagonal", lambda lib, x, **kw: lib.diagonal(x, **kw),
       _samples((((3, 4),), {}), (((3, 4),), {"offset": 1}), (((3, 4),), {"offset": -2}),
                (((2, 3, 4),), {"dim1": 1, "dim2": 2}), (((2, 3, 4),), {"offset": 1,
                                                                       "dim1": -1, "dim2": 0}),
                (((3, 3),), {"offset": 5}))),
    op("diagonal", lambda lib, x: (x.diagonal(), x.diag(), x.diag(-1), lib.trace(x),
                                   x.trace()),
       unary_samples([(3, 4), (4, 2), (1, 1)]), variant="methods"),
    op("diagonal_backward", lambda lib, x, **kw: lib.diag_embed(x, **kw),
       _samples((((3,),), {}), (((2, 3),), {"offset": 1}), (((2, 3),), {"offset": -1,
                                                                       "dim1": 0, "dim2": 2}),
                (((2, 3),), {"dim1": -1, "dim2": 0}))),
    op("diagonal_backward", lambda lib, x, **kw: (lib.diag(x, **kw), x.diag_embed()),
       _samples((((3,),), {}), (((3,),), {"diagonal": 2}), (((2,),), {"diagonal": -1})),
       variant="diag"),
    # ---- einsum ----
    op("einsum", lambda lib, *xs, eq: lib.einsum(eq, *xs), _einsum_samples),
    op("einsum", lambda lib, x, y: lib.einsum("ij,jk->ik", [x, y]),
       _samples((((2, 3), (3, 4)), {})), variant="list"),
    # ---- cumprod ----
    op("cumprod", lambda lib, x, **kw: lib.cumprod(x, **kw), _cumprod_samples),
    op("cumprod", lambda lib, x: (x.cumprod(0), x.cumprod(dim=-1)), unary_samples([(2, 3)]),
       variant="methods"),
    # ---- median (gather) ----
    op("gather", _median_pair, _median_samples, variant="median"),
    op("gather", _nanmedian_pair, _median_samples, variant="nanmedian"),
    op("gather", lambda lib, x, **kw: _flat(_median_pair(lib, x, **kw))
       + _flat(_nanmedian_pair(lib, x, **kw)),
       lambda rng, info: _nan_median_samples(rng, info, all_nan=False), variant="median_nan"),
    op("gather", _median_pair, _nan_median_samples, variant="median_all_nan"),
    # ---- meshgrid (reshape + expand) ----
    op("expand", lambda lib, x, y: lib.meshgrid(x, y, indexing="ij"),
       _samples((((3,), (2,)), {}), (((1,), (4,)), {})), variant="meshgrid_ij"),
    op("expand", lambda lib, x, y, z: lib.meshgrid(x, y, z, indexing="xy"),
       _samples((((3,), (2,), (4,)), {})), variant="meshgrid_xy"),
]
