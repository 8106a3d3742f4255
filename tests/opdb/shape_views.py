"""Op-database entries: shape ops and views: reshape, expand, permute, squeeze/unsqueeze,
flatten/unflatten, repeat, cat/stack, narrow/select, flip/roll, tril/triu, pad, unfold,
rot90, diagonal, diagflat, block_diag, combinations, split_with_sizes, atleast_nd,
as_strided, alias.

Values and gradients against torch in float64 and float32, gradcheck, second order,
hypothesis where `hyp` is set (tests/test_opdb.py), forward mode (tests/test_forward_mode.py).
"""
from hypothesis import strategies as st

from _opinfo import OpInfo, REAL, Sample, draw_array, op, unary_samples
from opdb.samples import _many, _one_arg_samples, _shape, _shaped_samples, _shapes


def _reshape_samples(rng, info):
    x = lambda s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x((2, 3)), (3, 2))), Sample((x((2, 3)), (-1,))), Sample((x(()), (1,))),
            Sample((x((6,)), (1, 2, 3))), Sample((x((1,)), ())),
            Sample((x((2, 3, 4)), (4, -1)))]


def _expand_samples(rng, info):
    x = lambda s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x((3, 1)), (3, 4))), Sample((x((3,)), (2, 3))), Sample((x(()), (2, 2))),
            Sample((x((1,)), (2, 3, 1))), Sample((x((2, 1)), (-1, 3))),
            Sample((x((2, 3)), (2, 3)))]


def _permute_samples(rng, info):
    x = lambda s: rng.standard_normal(s)  # noqa: E731
    return [Sample((x((2, 3, 4)), (2, 0, 1))), Sample((x((2, 3)), (1, 0))),
            Sample((x((2, 3, 4)), (-1, 0, 1))), Sample((x(()), ())), Sample((x((3,)), (0,)))]


def _alias(x):
    from tapegrad.ops.rules.shape import alias as op_
    from tapegrad.core.record import apply
    return apply(op_, x)


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


_SQUEEZE = _one_arg_samples(((1, 3, 1), {}), ((1, 3, 1), {"dim": 0}), ((1, 3, 1), {"dim": (0, 2)}),
                    ((1, 3, 1), {"dim": 1}), ((), {}), ((1,), {"dim": 0}), ((2, 1), {"dim": -1}))


ENTRIES = [
    # ---- shape ----
    op("reshape", lambda lib, x, s: lib.reshape(x, s), _reshape_samples),
    op("reshape", lambda lib, x, s: x.view(s), _reshape_samples, variant="view"),
    op("expand", lambda lib, x, s: x.expand(*s), _expand_samples),
    op("expand", lambda lib, x, s: lib.broadcast_to(x, s), _expand_samples,
       variant="broadcast_to"),
    op("permute", lambda lib, x, d: x.permute(d), _permute_samples),
    op("permute", lambda lib, x: (x.transpose(0, 2), x.T, lib.transpose(x, -1, -2), x.mT),
       unary_samples([(2, 3, 4), (1, 2, 3)]), variant="transpose"),
    op("permute", lambda lib, x: (x.t(), lib.t(x)), unary_samples([(2, 3), (3,)]),
       variant="t"),
    # the identity that make_dual/unpack_dual use to hand out a new tensor object
    OpInfo("alias", lambda x: _alias(x), lambda x: x.view_as(x), unary_samples()),
    op("unfold", lambda lib, x, **kw: x.unfold(**kw), _shapes(
        (((7,),), dict(dimension=0, size=3, step=2)), (((7,),), dict(dimension=0, size=7, step=1)),
        (((2, 6, 3),), dict(dimension=1, size=2, step=1)),
        (((2, 5),), dict(dimension=-1, size=1, step=3)), (((4, 1),), dict(dimension=1, size=1, step=1)),
        (((),), dict(dimension=0, size=1, step=1))), covers=("index_select",)),
    op("rot90", lambda lib, x, **kw: lib.rot90(x, **kw), _shapes(
        (((2, 3),), {}), (((2, 3),), dict(k=2)), (((2, 3),), dict(k=3)), (((2, 3),), dict(k=-1)),
        (((2, 3, 4),), dict(k=1, dims=(2, 0))), (((1, 3),), dict(k=4)))),
    op("diagflat", lambda lib, x, **kw: lib.diagflat(x, **kw), _shapes(
        (((3,),), {}), (((2, 2),), dict(offset=1)), (((),), dict(offset=-2)))),
    op("block_diag", lambda lib, *ts: lib.block_diag(*ts), _shapes(
        (((2, 3), (), (2,), (1, 1)), {}), (((2, 2),), {}))),
    op("combinations", lambda lib, x, **kw: lib.combinations(x, **kw), _shapes(
        (((4,),), {}), (((4,),), dict(r=3)), (((3,),), dict(with_replacement=True)),
        (((1,),), dict(r=1)))),
    op("split_with_sizes", lambda lib, x, **kw: x.split_with_sizes(**kw), _shapes(
        (((5, 2),), dict(split_sizes=[2, 0, 3])), (((2, 3),), dict(split_sizes=[1, 2], dim=1)))),
    *[op(f"atleast_{n}d", (lambda n: lambda lib, *ts: getattr(lib, f"atleast_{n}d")(*ts))(n),
         _shapes((((), (3,), (2, 3), (1, 2, 1)), {}), (((),), {})))
      for n in (1, 2, 3)],
    op("as_strided", lambda lib, x: lib.as_strided(x, (3, 3), (2, 1), 1), _shapes(
        (((3, 4),), {}), (((12,),), {})),
       covers=("as_strided_backward", "as_strided_gather")),  # its second order, jvp
    op("as_strided", lambda lib, x: x.as_strided((2, 2, 2), (0, 1, 3)), _shapes(
        (((2, 3),), {}), (((6,),), {})), variant="overlapping"),
    # ---- diagonals ----
    op("diagonal", lambda lib, x, **kw: lib.diagonal(x, **kw),
       _shaped_samples((((3, 4),), {}), (((3, 4),), {"offset": 1}), (((3, 4),), {"offset": -2}),
                (((2, 3, 4),), {"dim1": 1, "dim2": 2}), (((2, 3, 4),), {"offset": 1,
                                                                       "dim1": -1, "dim2": 0}),
                (((3, 3),), {"offset": 5}))),
    op("diagonal", lambda lib, x: (x.diagonal(), x.diag(), x.diag(-1), lib.trace(x),
                                   x.trace()),
       unary_samples([(3, 4), (4, 2), (1, 1)]), variant="methods"),
    op("diagonal_backward", lambda lib, x, **kw: lib.diag_embed(x, **kw),
       _shaped_samples((((3,),), {}), (((2, 3),), {"offset": 1}), (((2, 3),), {"offset": -1,
                                                                       "dim1": 0, "dim2": 2}),
                (((2, 3),), {"dim1": -1, "dim2": 0}))),
    op("diagonal_backward", lambda lib, x, **kw: (lib.diag(x, **kw), x.diag_embed()),
       _shaped_samples((((3,),), {}), (((3,),), {"diagonal": 2}), (((2,),), {"diagonal": -1})),
       variant="diag"),
    # ---- meshgrid (reshape + expand) ----
    op("expand", lambda lib, x, y: lib.meshgrid(x, y, indexing="ij"),
       _shaped_samples((((3,), (2,)), {}), (((1,), (4,)), {})), variant="meshgrid_ij"),
    op("expand", lambda lib, x, y, z: lib.meshgrid(x, y, z, indexing="xy"),
       _shaped_samples((((3,), (2,), (4,)), {})), variant="meshgrid_xy"),
    # ---- reshapes ----
    op("squeeze", lambda lib, x, **kw: lib.squeeze(x, **kw), _SQUEEZE, hyp=_hyp_squeeze),
    op("squeeze", lambda lib, x, **kw: x.squeeze(**kw), _SQUEEZE, variant="method"),
    op("unsqueeze", lambda lib, x, dim: x.unsqueeze(dim),
       _one_arg_samples(((2, 3), {"dim": 0}), ((2, 3), {"dim": -1}), ((2, 3), {"dim": 1}), ((), {"dim": 0}),
                ((), {"dim": -1})), hyp=_hyp_dim(extra=1)),
    op("flatten", lambda lib, x, **kw: lib.flatten(x, **kw),
       _one_arg_samples(((2, 3, 4), {}), ((2, 3, 4), {"start_dim": 1}), ((2, 3, 4), {"end_dim": -2}),
                ((), {}), ((2, 1, 3), {"start_dim": 1, "end_dim": 1}), ((5,), {}))),
    op("unflatten", lambda lib, x, dim, sizes: x.unflatten(dim, sizes),
       _one_arg_samples(((2, 6), {"dim": 1, "sizes": (2, 3)}), ((6,), {"dim": 0, "sizes": (-1, 2)}),
                ((2, 6, 1), {"dim": -2, "sizes": (3, 1, 2)}))),
    op("repeat", lambda lib, x, reps: x.repeat(*reps),
       _one_arg_samples(((2, 3), {"reps": (2, 1)}), ((3,), {"reps": (2, 2)}), ((), {"reps": (3,)}),
                ((2, 1, 3), {"reps": (1, 2, 1, 2)}), ((2, 3), {"reps": (1, 1)}),
                ((2, 3), {"reps": (0, 1)}))),
    op("permute", lambda lib, x, src, dst: lib.movedim(x, src, dst),
       _one_arg_samples(((2, 3, 4), {"src": 0, "dst": -1}), ((2, 3, 4), {"src": (0, 1), "dst": (2, 0)})),
       variant="movedim"),
    # ---- joining and splitting ----
    op("cat", _cat, _cat_samples, hyp=_hyp_cat),
    op("cat", lambda lib, x, y: (lib.concat([x, y], dim=1), lib.concatenate((y, x), 1)),
       _many(((2, 3), (2, 1))), variant="aliases"),
    op("stack", _stack, _stack_samples, hyp=_hyp_stack),
    op("stack", lambda lib, x, y: (lib.hstack([x, y]), lib.vstack([x, y])),
       _many(((2, 3), (2, 3)), ((3,), (3,))), variant="hstack_vstack", covers=("cat",)),
    op("narrow", lambda lib, x, **kw: x.split(**kw),
       _one_arg_samples(((5, 3), {"split_size": 2}), ((5, 3), {"split_size": [1, 4]}),
                ((2, 6), {"split_size": 3, "dim": 1}), ((4,), {"split_size": 4}),
                ((2, 5), {"split_size": [2, 0, 3], "dim": -1}))),
    op("narrow", lambda lib, x, **kw: lib.chunk(x, **kw),
       _one_arg_samples(((5, 3), {"chunks": 2}), ((6, 2), {"chunks": 4}),
                ((2, 7), {"chunks": 3, "dim": 1})),
       variant="chunk"),
    op("narrow", lambda lib, x, sec, dim=0: lib.tensor_split(x, sec, dim),
       _one_arg_samples(((5, 3), {"sec": 3}), ((7,), {"sec": [1, 5]}),
                ((2, 6), {"sec": 4, "dim": 1})), variant="tensor_split"),
    op("narrow", lambda lib, x, **kw: x.narrow(**kw),
       _one_arg_samples(((5, 3), {"dim": 0, "start": 1, "length": 3}),
                ((5, 3), {"dim": -1, "start": -2, "length": 2})), variant="narrow"),
    op("select", lambda lib, x, **kw: lib.unbind(x, **kw),
       _one_arg_samples(((3, 2), {}), ((2, 3, 2), {"dim": 1}), ((1,), {}), ((2, 2), {"dim": -1})),
       hyp=_hyp_dim(min_dims=1)),
    op("select", lambda lib, x, dim, index: x.select(dim, index),
       _one_arg_samples(((3, 2), {"dim": 0, "index": 2}), ((2, 3, 2), {"dim": -1, "index": -1})),
       variant="method"),
    # ---- reordering, triangles, padding ----
    op("flip", lambda lib, x, dims: lib.flip(x, dims),
       _one_arg_samples(((3, 4), {"dims": (0,)}), ((2, 3, 4), {"dims": (0, 2)}), ((3,), {"dims": (-1,)}),
                ((2, 3), {"dims": ()}), ((), {"dims": ()}))),
    op("flip", lambda lib, x: (x.fliplr(), x.flipud(), x.flip(1, 0)), unary_samples([(2, 3)]),
       variant="methods"),
    # PyTorch has no negative slice steps; tapegrad has NumPy's: compare with flips
    OpInfo("flip", lambda x: x[::-1, ::-2], lambda x: x.flip(0).flip(1)[:, ::2],
           unary_samples([(3, 5), (4, 4), (1, 2)]), variant="negative_step",
           covers=("getitem",)),
    op("roll", lambda lib, x, **kw: lib.roll(x, **kw),
       _one_arg_samples(((3, 4), {"shifts": 1, "dims": 0}), ((3, 4), {"shifts": (2, -1), "dims": (1, 0)}),
                ((3, 4), {"shifts": 5}), ((3, 4), {"shifts": -7, "dims": -1}),
                ((2,), {"shifts": 0}))),
    op("tril", lambda lib, x, **kw: lib.tril(x, **kw),
       _one_arg_samples(((3, 4), {}), ((3, 4), {"diagonal": -1}), ((4, 3), {"diagonal": 2}),
                ((2, 3, 3), {}))),
    op("triu", lambda lib, x, **kw: x.triu(**kw),
       _one_arg_samples(((3, 4), {}), ((3, 4), {"diagonal": 1}), ((4, 3), {"diagonal": -2}),
                ((2, 3, 3), {"diagonal": 5}))),
    op("pad", lambda lib, x, **kw: _F(lib).pad(x, **kw), _pad_samples),
    op("pad", lambda lib, x, **kw: _F(lib).pad(x, **kw), _pad_mode_samples,
       variant="modes", covers=("index_select",)),
]
