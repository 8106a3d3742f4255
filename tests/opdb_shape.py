"""Op-database entries for the shape ops (ops/rules/shape.py) and indexing ops (ops/rules/indexing.py).

Picked up by tests/opdb.py: each entry runs forward, gradients (float64 and float32),
gradcheck, second order and (where `hyp` is set) hypothesis against PyTorch.
Index arguments are written inside the lambdas with `lib.tensor(...)`, so the same
code runs with lib = tapegrad and lib = torch.
"""
import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from _opinfo import REAL, SEPARATED, OpInfo, Sample, draw_array, op, unary_samples


def _samples(*specs):
    """specs: tuples (shape, kwargs) -> one float64 sample each (values from N(0, 1))."""
    def gen(rng, info):
        return [Sample((info.domain_for(0).sample(rng, s),), dict(kw)) for s, kw in specs]
    return gen


def _many(*shape_lists):
    """Samples with several array args: each spec is a tuple of shapes (+ kwargs dict)."""
    def gen(rng, info):
        out = []
        for spec in shape_lists:
            kw = spec[-1] if isinstance(spec[-1], dict) else {}
            shapes = spec[:-1] if kw or isinstance(spec[-1], dict) else spec
            out.append(Sample(tuple(info.domain_for(i).sample(rng, s)
                                    for i, s in enumerate(shapes)), dict(kw)))
        return out
    return gen


# ---- hypothesis generators ------------------------------------------------------------
def _shape(draw, min_dims=0, max_dims=3):
    return draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=4))


def _hyp_dim(extra=0, min_dims=0, kw=None):
    """One array and `dim` in range (extra=1 for unsqueeze/stack-like ops)."""
    def hyp(draw, info):
        shape = _shape(draw, min_dims)
        nd = max(len(shape) + extra, 1)
        k = {"dim": draw(st.integers(-nd, nd - 1))}
        if kw is not None:
            k.update(kw(draw, shape))
        return Sample((draw_array(draw, shape, info.domain_for(0)),), k)
    return hyp


def _hyp_squeeze(draw, info):
    shape = draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=0, max_size=4).map(tuple))
    nd = max(len(shape), 1)
    dim = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                         st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd,
                                  unique=True).map(tuple)))
    kw = {} if dim is None else {"dim": dim}
    return Sample((draw_array(draw, shape, REAL),), kw)


def _hyp_cat(draw, info):
    base = list(_shape(draw, 1))
    d = draw(st.integers(0, len(base) - 1))
    n = draw(st.integers(1, 3))
    arrs = []
    for _ in range(n):
        s = list(base)
        s[d] = draw(st.integers(0, 3))
        arrs.append(draw_array(draw, tuple(s), REAL))
    return Sample(tuple(arrs), {"dim": d - len(base) if draw(st.booleans()) else d})


def _hyp_stack(draw, info):
    shape = _shape(draw)
    n = draw(st.integers(1, 3))
    nd = len(shape) + 1
    return Sample(tuple(draw_array(draw, shape, REAL) for _ in range(n)),
                  {"dim": draw(st.integers(-nd, nd - 1))})


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


def _pad_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x(2, 3),), {"pad": (1, 2)}), Sample((x(2, 3),), {"pad": (1, 0, 0, 2)}),
            Sample((x(2, 3, 4),), {"pad": (0, 1, 2, 1, 1, 0), "value": 0.5}),
            Sample((x(2, 5),), {"pad": (-1, 2)}), Sample((x(4, 5),), {"pad": (-2, -1, 1, -1)}),
            Sample((x(3,),), {"pad": (0, 0)})]


def _pad_mode_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    out = []
    for mode in ("reflect", "replicate", "circular"):
        out += [Sample((x(2, 3, 5),), {"pad": (2, 1), "mode": mode}),
                Sample((x(1, 2, 4, 5),), {"pad": (1, 2, 3, 1), "mode": mode})]
    return out


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


def _cat_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x(2, 1), x(2, 3), x(2, 2)), {"dim": 1}),
            Sample((x(1, 3), x(2, 3)), {"dim": 0}), Sample((x(2, 3, 2), x(2, 3, 1)), {"dim": -1}),
            Sample((x(3,),), {"dim": 0}), Sample((x(0, 2), x(3, 2)), {"dim": 0}),
            Sample((x(4,), x(2)), {})]


def _stack_samples(rng, info):
    x = lambda *s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x(2, 3), x(2, 3), x(2, 3)), {"dim": 0}), Sample((x(2, 3), x(2, 3)), {"dim": 2}),
            Sample((x(2, 3), x(2, 3)), {"dim": -2}), Sample((x(), x()), {"dim": 0}),
            Sample((x(4),), {"dim": 1})]


def _F(lib):
    return lib.nn.functional


def _cat(lib, *xs, dim=0):
    return lib.cat(list(xs), dim=dim)


def _stack(lib, *xs, dim=0):
    return lib.stack(xs, dim=dim)


_SQUEEZE = _samples(((1, 3, 1), {}), ((1, 3, 1), {"dim": 0}), ((1, 3, 1), {"dim": (0, 2)}),
                    ((1, 3, 1), {"dim": 1}), ((), {}), ((1,), {"dim": 0}), ((2, 1), {"dim": -1}))

ENTRIES = [
    # ---- reshapes ----
    op("squeeze", lambda lib, x, **kw: lib.squeeze(x, **kw), _SQUEEZE, hyp=_hyp_squeeze),
    op("squeeze", lambda lib, x, **kw: x.squeeze(**kw), _SQUEEZE, variant="method"),
    op("unsqueeze", lambda lib, x, dim: x.unsqueeze(dim),
       _samples(((2, 3), {"dim": 0}), ((2, 3), {"dim": -1}), ((2, 3), {"dim": 1}), ((), {"dim": 0}),
                ((), {"dim": -1})), hyp=_hyp_dim(extra=1)),
    op("flatten", lambda lib, x, **kw: lib.flatten(x, **kw),
       _samples(((2, 3, 4), {}), ((2, 3, 4), {"start_dim": 1}), ((2, 3, 4), {"end_dim": -2}),
                ((), {}), ((2, 1, 3), {"start_dim": 1, "end_dim": 1}), ((5,), {}))),
    op("unflatten", lambda lib, x, dim, sizes: x.unflatten(dim, sizes),
       _samples(((2, 6), {"dim": 1, "sizes": (2, 3)}), ((6,), {"dim": 0, "sizes": (-1, 2)}),
                ((2, 6, 1), {"dim": -2, "sizes": (3, 1, 2)}))),
    op("repeat", lambda lib, x, reps: x.repeat(*reps),
       _samples(((2, 3), {"reps": (2, 1)}), ((3,), {"reps": (2, 2)}), ((), {"reps": (3,)}),
                ((2, 1, 3), {"reps": (1, 2, 1, 2)}), ((2, 3), {"reps": (1, 1)}),
                ((2, 3), {"reps": (0, 1)}))),
    op("permute", lambda lib, x, src, dst: lib.movedim(x, src, dst),
       _samples(((2, 3, 4), {"src": 0, "dst": -1}), ((2, 3, 4), {"src": (0, 1), "dst": (2, 0)})),
       variant="movedim"),
    # ---- joining and splitting ----
    op("cat", _cat, _cat_samples, hyp=_hyp_cat),
    op("cat", lambda lib, x, y: (lib.concat([x, y], dim=1), lib.concatenate((y, x), 1)),
       _many(((2, 3), (2, 1))), variant="aliases"),
    op("stack", _stack, _stack_samples, hyp=_hyp_stack),
    op("stack", lambda lib, x, y: (lib.hstack([x, y]), lib.vstack([x, y])),
       _many(((2, 3), (2, 3)), ((3,), (3,))), variant="hstack_vstack", covers=("cat",)),
    op("narrow", lambda lib, x, **kw: x.split(**kw),
       _samples(((5, 3), {"split_size": 2}), ((5, 3), {"split_size": [1, 4]}),
                ((2, 6), {"split_size": 3, "dim": 1}), ((4,), {"split_size": 4}),
                ((2, 5), {"split_size": [2, 0, 3], "dim": -1}))),
    op("narrow", lambda lib, x, **kw: lib.chunk(x, **kw),
       _samples(((5, 3), {"chunks": 2}), ((6, 2), {"chunks": 4}),
                ((2, 7), {"chunks": 3, "dim": 1})),
       variant="chunk"),
    op("narrow", lambda lib, x, sec, dim=0: lib.tensor_split(x, sec, dim),
       _samples(((5, 3), {"sec": 3}), ((7,), {"sec": [1, 5]}),
                ((2, 6), {"sec": 4, "dim": 1})), variant="tensor_split"),
    op("narrow", lambda lib, x, **kw: x.narrow(**kw),
       _samples(((5, 3), {"dim": 0, "start": 1, "length": 3}),
                ((5, 3), {"dim": -1, "start": -2, "length": 2})), variant="narrow"),
    op("select", lambda lib, x, **kw: lib.unbind(x, **kw),
       _samples(((3, 2), {}), ((2, 3, 2), {"dim": 1}), ((1,), {}), ((2, 2), {"dim": -1})),
       hyp=_hyp_dim(min_dims=1)),
    op("select", lambda lib, x, dim, index: x.select(dim, index),
       _samples(((3, 2), {"dim": 0, "index": 2}), ((2, 3, 2), {"dim": -1, "index": -1})),
       variant="method"),
    # ---- reordering, triangles, padding ----
    op("flip", lambda lib, x, dims: lib.flip(x, dims),
       _samples(((3, 4), {"dims": (0,)}), ((2, 3, 4), {"dims": (0, 2)}), ((3,), {"dims": (-1,)}),
                ((2, 3), {"dims": ()}), ((), {"dims": ()}))),
    op("flip", lambda lib, x: (x.fliplr(), x.flipud(), x.flip(1, 0)), unary_samples([(2, 3)]),
       variant="methods"),
    # PyTorch has no negative slice steps; tapegrad has NumPy's: compare with flips
    OpInfo("flip", lambda x: x[::-1, ::-2], lambda x: x.flip(0).flip(1)[:, ::2],
           unary_samples([(3, 5), (4, 4), (1, 2)]), variant="negative_step",
           covers=("getitem",)),
    op("roll", lambda lib, x, **kw: lib.roll(x, **kw),
       _samples(((3, 4), {"shifts": 1, "dims": 0}), ((3, 4), {"shifts": (2, -1), "dims": (1, 0)}),
                ((3, 4), {"shifts": 5}), ((3, 4), {"shifts": -7, "dims": -1}),
                ((2,), {"shifts": 0}))),
    op("tril", lambda lib, x, **kw: lib.tril(x, **kw),
       _samples(((3, 4), {}), ((3, 4), {"diagonal": -1}), ((4, 3), {"diagonal": 2}),
                ((2, 3, 3), {}))),
    op("triu", lambda lib, x, **kw: x.triu(**kw),
       _samples(((3, 4), {}), ((3, 4), {"diagonal": 1}), ((4, 3), {"diagonal": -2}),
                ((2, 3, 3), {"diagonal": 5}))),
    op("pad", lambda lib, x, **kw: _F(lib).pad(x, **kw), _pad_samples),
    op("pad", lambda lib, x, **kw: _F(lib).pad(x, **kw), _pad_mode_samples,
       variant="modes", covers=("index_select",)),
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
       _samples(((3, 5), {"k": 2}), ((3, 5), {"k": 3, "dim": 0, "keepdim": True})),
       variant="kthvalue", domain=SEPARATED),
]
