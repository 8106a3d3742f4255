"""Op-database entries: indexing, gathering and scattering: getitem/setitem, gather,
scatter(_add, _reduce), index_select/add/fill/copy, take, masked_fill/scatter,
fill_diagonal_.

Values and gradients against torch in float64 and float32, gradcheck, second order,
hypothesis where `hyp` is set (tests/test_opdb.py), forward mode (tests/test_forward_mode.py).
"""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from _opinfo import NONZERO, REAL, SEPARATED, Sample, draw_array, op, unary_samples
from opdb.samples import _many, _one_arg_samples, _shape, _shapes


# scatter_reduce's index (dim 0 of a (3, 4) self, from a (2, 4) src)
_IDX = [[0, 2, 2, 1], [2, 0, 2, 1]]


def _scatter(reduce, include_self):
    return lambda lib, x, s: x.scatter_reduce(0, lib.tensor(_IDX), s, reduce,
                                              include_self=include_self)


def _src_with_zeros(rng, info):
    """(self (3, 4), src (2, 4)) with zeros in src: one target gets one zero, another two."""
    x = NONZERO.sample(rng, (3, 4))
    src = NONZERO.sample(rng, (2, 4))
    src[0, 1] = 0.0                 # target (0, 1): one zero
    src[0, 2] = src[1, 2] = 0.0     # target (2, 2): two zeros
    return [Sample((x, src), nograd=(), gradcheck=True)]


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


def _hyp_getitem(draw, info):
    """Random mixtures of ints, slices (positive steps: PyTorch has no negative ones),
    None, and integer index lists (with repeats) of one common length."""
    shape = _shape(draw, 1)
    m = draw(st.integers(1, 4))
    key = []
    for n in shape:
        kind = draw(st.sampled_from(["int", "slice", "list", "full", "none"]))
        if kind == "int":
            key.append(draw(st.integers(-n, n - 1)))
        elif kind == "slice":
            key.append(slice(draw(st.one_of(st.none(), st.integers(-n - 1, n + 1))),
                             draw(st.one_of(st.none(), st.integers(-n - 1, n + 1))),
                             draw(st.integers(1, 3))))
        elif kind == "list":
            key.append(("idx", draw(st.lists(st.integers(-n, n - 1), min_size=m, max_size=m))))
        elif kind == "full":
            key.append(slice(None))
        else:
            key += [None, slice(None)]
    if draw(st.booleans()) and len(key) > 1:
        key = key[:draw(st.integers(1, len(key)))]
        if draw(st.booleans()):
            key = key[:-1] + [Ellipsis] + key[-1:]
    return Sample((draw_array(draw, shape, REAL),), {"key": tuple(key)})


def _hyp_mask(draw, info):
    shape = _shape(draw, 1)
    x = draw_array(draw, shape, REAL)
    k = draw(st.integers(1, len(shape)))
    mask = draw(hnp.arrays(np.bool_, shape[:k]))
    return Sample((x, mask))


def _hyp_gather(draw, info):
    shape = _shape(draw, 1)
    nd = len(shape)
    d = draw(st.integers(0, nd - 1))
    ishape = tuple(draw(st.integers(1, 4)) if i == d else draw(st.integers(1, s))
                   for i, s in enumerate(shape))
    idx = draw(hnp.arrays(np.int64, ishape, elements=st.integers(0, shape[d] - 1)))
    return Sample((draw_array(draw, shape, REAL), idx), {"dim": d})


def _key(lib, key):
    """Index specs -> library objects: ("idx", list) becomes lib.tensor(list)."""
    if isinstance(key, tuple) and len(key) == 2 and key[0] == "idx":
        return lib.tensor(np.array(key[1], dtype=np.int64))
    if isinstance(key, tuple):
        return tuple(_key(lib, k) for k in key)
    if isinstance(key, np.ndarray):
        return lib.tensor(key)
    return key


def _getitem_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    keys = [
        ((3, 4), 1), ((3, 4), -1), ((3, 4), (slice(None), 2)), ((3, 4), (slice(1, None), 0)),
        ((3, 4), (slice(None), slice(None, None, 2))), ((2, 3, 4), (Ellipsis, 1)),
        ((2, 3, 4), (None, 0, Ellipsis, None)), ((5,), slice(-3, None)),
        ((3, 4), ("idx", [0, 0, 2])),                     # repeated rows add up
        ((3, 4), (slice(None), ("idx", [1, 1, 3, 1]))),
        ((3, 4), (("idx", [0, 2, 2]), ("idx", [1, 1, 3]))),  # pairs (repeat (2,1) twice)
        ((2, 3, 4), (("idx", [1, 0]), slice(None), ("idx", [3, 3]))),  # separated: dims first
        ((2, 3, 4), (slice(None), ("idx", [[0, 1], [2, 2]]))),  # 2-D index
        ((2, 3, 4), (1, Ellipsis, ("idx", [0, 2]))),       # int + array: PyTorch's order
        ((2, 3, 4), (None, 1, slice(None), ("idx", [2, 0, 2]))),
        ((3, 4), (("idx", -1),)),                         # 0-d integer tensor
        ((4,), ("idx", [-1, -4, 0])),                     # negative indices
        ((3, 4), ("idx", [])),                            # empty selection
        ((), None), ((), Ellipsis),
    ]
    return [Sample((x(*s),), {"key": k}) for s, k in keys]


def _mask_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x(3, 4), rng.random((3, 4)) > 0.5)),
            Sample((x(3, 4), np.array([True, False, True]))),
            Sample((x(2, 3, 2), rng.random((2, 3)) > 0.3)), Sample((x(3,), np.zeros(3, bool)))]


def _setitem(lib, x, v, key):
    y = x * 1.0  # a non-leaf copy we may change in place
    y[_key(lib, key)] = v
    return y


def _setitem_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    return [
        Sample((x(3, 4), x(4)), {"key": 0}),
        Sample((x(3, 4), x(3, 2)), {"key": (slice(None), slice(1, 3))}),
        Sample((x(3, 4), x(2)), {"key": (slice(None, 2), 1)}),
        Sample((x(3, 4), x()), {"key": (("idx", [0, 2]), ("idx", [1, 3]))}),  # broadcast value
        Sample((x(3, 4), x(2, 4)), {"key": ("idx", [2, 0])}),
        Sample((x(3, 4), x(1, 4)), {"key": 1}),            # extra leading 1-dim
        Sample((x(2, 3, 4), x(3, 2)), {"key": (1, Ellipsis, ("idx", [0, 2]))}),
        Sample((x(3, 4), 2.5), {"key": (Ellipsis, 0)}),   # a Python number
    ]


def _setitem_mask(lib, x, v, m):
    y = x * 1.0
    y[m] = v
    return y


def _index_put_acc(lib, x, v):
    return lib.index_put(x, (lib.tensor([0, 2, 0, 0]),), v, accumulate=True)


def _gather_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x(3, 4), np.array([[0, 0], [3, 1], [2, 2]])), {"dim": 1}),
            Sample((x(3, 4), np.array([[2, 1, 0, 0], [0, 0, 0, 1]])), {"dim": 0}),
            Sample((x(3, 4), np.array([[1], [3]])), {"dim": -1}),    # smaller index
            Sample((x(2, 3, 2), np.array([[[1, 0]], [[2, 2]]])), {"dim": 1}),
            Sample((x(4,), np.array([3, 3, 0])), {"dim": 0})]


def _scatter_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    # NOTE: scatter (not scatter_add) with repeated targets writes an unspecified one of
    # the candidates, so its samples write each position at most once.
    return [Sample((x(3, 4), np.array([[0, 2], [3, 1], [1, 0]]), x(3, 2)), {"dim": 1}),
            Sample((x(3, 4), np.array([[2, 0, 1, 0]]), x(1, 4)), {"dim": 0}),
            Sample((x(4,), np.array([3, 0]), x(2)), {"dim": 0})]


def _scatter_add_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x(3, 4), np.array([[0, 0], [3, 3], [1, 0]]), x(3, 2)), {"dim": 1}),
            Sample((x(3, 4), np.array([[2, 0, 2, 0], [2, 2, 1, 0]]), x(2, 4)), {"dim": 0}),
            Sample((x(4,), np.array([3, 3, 3]), x(3)), {"dim": 0})]


def _index_select_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x(3, 4), np.array([0, 0, 2])), {"dim": 0}),
            Sample((x(3, 4), np.array([3, 1])), {"dim": 1}),
            Sample((x(2, 3, 4), np.array([2, 2, 2, 0])), {"dim": -2}),
            Sample((x(5,), np.array([], dtype=np.int64)), {"dim": 0})]


def _index_add_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x(3, 4), np.array([0, 0, 2]), x(3, 4)), {"dim": 0}),
            Sample((x(3, 4), np.array([3, 1]), x(3, 2)), {"dim": 1, "alpha": 2.5}),
            Sample((x(5,), np.array([4, 4]), x(2)), {"dim": 0})]


def _masked_fill_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    m = lambda *s: rng.random(s) > 0.5  # noqa: E731
    return [Sample((x(3, 4), m(3, 4), 1.5)), Sample((x(3, 4), m(4), -2.0)),
            Sample((x(3, 4), m(3, 1), x())), Sample((x(), np.array(True), x())),
            Sample((x(2, 3), np.zeros((2, 3), bool), x()))]


def _sort_samples(rng, info):
    s = lambda *sh: SEPARATED.sample(rng, sh)  # noqa: E731  (no ties: unique order)
    return [Sample((s(3, 4),), {"dim": 1}), Sample((s(3, 4),), {"dim": 0, "descending": True}),
            Sample((s(5,),), {}), Sample((s(2, 3, 2),), {"dim": -2, "descending": True})]


def _topk_samples(rng, info):
    s = lambda *sh: SEPARATED.sample(rng, sh)  # noqa: E731
    return [Sample((s(3, 5),), {"k": 2}), Sample((s(3, 5),), {"k": 3, "dim": 0, "largest": False}),
            Sample((s(6,),), {"k": 6}), Sample((s(2, 4),), {"k": 0})]


def _take_along_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x(3, 4), np.array([[0, 3], [1, 1], [2, 0]])), {"dim": 1}),
            Sample((x(3, 4), np.array([[0, 2, 1, 1]])), {"dim": 0}),
            Sample((x(3, 4), np.array([5, 0, 11])), {}),
            Sample((x(3, 4), np.array([[1], [0], [3]])), {"dim": -1})]


ENTRIES = [
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
    # src larger than index: torch's own backward fails ("invalid gradient ... [2, 4]")
    *[op("scatter_reduce", _scatter(r, inc), _shapes((((3, 4), (2, 4)), {})),
         domain=SEPARATED, variant=f"{r}{'' if inc else '_exclude_self'}")
      for r in ("sum", "mean", "amax", "amin") for inc in (True, False)],
    *[op("scatter_reduce", _scatter("prod", inc), _shapes((((3, 4), (2, 4)), {})),
         domain=NONZERO, variant=f"prod{'' if inc else '_exclude_self'}") for inc in (True, False)],
    # a zero in src: the product's gradient is the product of the others (scatter_prod's
    # rule; first order only: its double backward is not written)
    *[op("scatter_reduce", _scatter("prod", inc), _src_with_zeros, domain=NONZERO,
         covers=("scatter_prod",), gradgrad=False,
         variant=f"prod_zero_src{'' if inc else '_exclude_self'}") for inc in (True, False)],
    op("scatter_reduce", lambda lib, x, s: lib.scatter_reduce(
        x, 1, lib.tensor([[1, 1], [0, 1]]), s, "amax"), _shapes((((2, 3), (2, 2)), {})),
       domain=SEPARATED, variant="dim1"),
    op("scatter_reduce", lambda lib, x, s: x.clone().scatter_reduce_(
        0, lib.tensor(_IDX), s, "mean", include_self=False), _shapes((((3, 4), (2, 4)), {})),
       variant="in_place"),
    op("fill_diagonal_", lambda lib, x, **kw: (x * 1).fill_diagonal_(**kw), _shapes(
        (((3, 3),), dict(fill_value=2.5)), (((2, 4),), dict(fill_value=-1.0)),
        (((7, 3),), dict(fill_value=0.0, wrap=True)), (((2, 2, 2),), dict(fill_value=1)))),
    # ---- median (gather) ----
    op("gather", _median_pair, _median_samples, variant="median"),
    op("gather", _nanmedian_pair, _median_samples, variant="nanmedian"),
    op("gather", lambda lib, x, **kw: _flat(_median_pair(lib, x, **kw))
       + _flat(_nanmedian_pair(lib, x, **kw)),
       lambda rng, info: _nan_median_samples(rng, info, all_nan=False), variant="median_nan"),
    op("gather", _median_pair, _nan_median_samples, variant="median_all_nan"),
    # ---- indexing ----
    op("getitem", lambda lib, x, key: x[_key(lib, key)], _getitem_samples, hyp=_hyp_getitem,
       covers=("getitem_backward",)),  # getitem_backward: second order of getitem
    op("getitem", lambda lib, x, m: x[m], _mask_samples, variant="mask", hyp=_hyp_mask),
    op("getitem", lambda lib, x, m: lib.masked_select(x, m), lambda rng, info: [
        Sample((rng.standard_normal((3, 4)), rng.random((3, 4)) > 0.5)),
        Sample((rng.standard_normal((3, 4)), rng.random((4,)) > 0.5)),
        Sample((rng.standard_normal(()), np.array(True)))], variant="masked_select"),
    op("getitem", lambda lib, x, m: x.masked_select(m),
       lambda rng, info: [Sample((rng.standard_normal((3, 1)), rng.random((3, 4)) > 0.5))],
       variant="masked_select_broadcast"),
    op("setitem", _setitem, _setitem_samples),
    op("setitem", _setitem_mask, lambda rng, info: [
        Sample((rng.standard_normal((3, 4)), rng.standard_normal(()), rng.random((3, 4)) > 0.5)),
        Sample((rng.standard_normal((3, 4)), rng.standard_normal((4,)),
                np.array([True, False, True])))],
       variant="mask"),
    op("setitem", _index_put_acc, _many(((3, 4), (4, 4)), ((3, 4), (4,)), ((3,), ())),
       variant="index_put_accumulate"),
    op("setitem", lambda lib, x, v: lib.index_put(x, (lib.tensor([1, 0]), lib.tensor([2, 2])), v),
       _many(((3, 4), (2,)), ((3, 4), ())), variant="index_put"),
    op("gather", lambda lib, x, idx, dim: lib.gather(x, dim, idx), _gather_samples,
       hyp=_hyp_gather, covers=("gather_backward",)),  # gather's VJP, run by second order
    op("gather", lambda lib, x, idx, **kw: lib.take_along_dim(x, idx, **kw), _take_along_samples,
       variant="take_along_dim"),
    op("scatter", lambda lib, x, idx, src, dim: lib.scatter(x, dim, idx, src), _scatter_samples,
       covers=("zero_at",)),  # zero_at: the VJP of an overwrite (setitem's too)
    op("scatter", lambda lib, x: x.scatter(1, lib.tensor([[0, 2], [3, 3]]), 0.5),
       unary_samples([(2, 4), (3, 4)]), variant="value"),
    op("scatter_add", lambda lib, x, idx, src, dim: x.scatter_add(dim, idx, src),
       _scatter_add_samples),
    op("index_select", lambda lib, x, idx, dim: lib.index_select(x, dim, idx),
       _index_select_samples, covers=("index_select_backward",)),
    op("index_select", lambda lib, x, r, **kw: lib.repeat_interleave(x, r, **kw),
       lambda rng, info: [
        Sample((rng.standard_normal((2, 3)), 2), {"dim": 1}),
        Sample((rng.standard_normal((2, 3)), np.array([1, 0, 3])), {"dim": -1}),
        Sample((rng.standard_normal((2, 3)), 2)), Sample((rng.standard_normal(()), 3))],
       variant="repeat_interleave"),
    op("index_add", lambda lib, x, idx, src, **kw: x.index_add(kw.pop("dim"), idx, src, **kw),
       _index_add_samples),
    op("masked_fill", lambda lib, x, m, v: x.masked_fill(m, v), _masked_fill_samples),
    op("gather", lambda lib, x, **kw: tuple(lib.sort(x, **kw)), _sort_samples, variant="sort"),
    op("gather", lambda lib, x, **kw: tuple(x.topk(**kw)), _topk_samples, variant="topk"),
    op("gather", lambda lib, x, **kw: tuple(x.kthvalue(**kw)),
       _one_arg_samples(((3, 5), {"k": 2}), ((3, 5), {"k": 3, "dim": 0, "keepdim": True})),
       variant="kthvalue", domain=SEPARATED),
]
