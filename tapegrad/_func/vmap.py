"""`vmap(func, in_dims, out_dims, randomness, chunk_size)`: map func over a batch dimension.

    vmap(f, in_dims=(None, 0))(w, xs)  ==  stack([f(w, xs[0]), f(w, xs[1]), ...])

torch.func's semantics (argument checks, error messages, pytrees of tensors, None for
unmapped inputs/outputs, in_dims/out_dims as nested prefixes of the argument/output
structure), implemented the straightforward way: func runs once per batch element on
that element's slices (`unbind` views), and the per-element outputs are stacked along
out_dims. Both steps are ordinary recorded ops, so vmap composes with every transform
and with backward in either order: vmap(grad(f)) gives per-sample gradients and
grad(lambda w: vmap(f)(w, xs).sum()) differentiates through the map.

There are no batching rules: the cost is B calls of func. `chunk_size` only bounds
memory in torch (it evaluates chunks of the batch at a time); here it is checked and
otherwise has no effect.

randomness (torch's three modes, for the default generator `tg.default_generator`):
    'error'      a random op inside func raises (the default)
    'different'  each element draws its own numbers (the loop does this naturally)
    'same'       every element sees the same numbers (the generator is rewound)
An explicitly passed `generator=` is not policed.
"""
import functools

import numpy as np

from ..ops import shape as _shape
from ..random import default_generator
from .._tensor import Tensor
from . import pytree

__all__ = ["vmap", "randomness_scope", "check_randomness"]

_RANDOMNESS = ("error", "different", "same")


def check_randomness(randomness):
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', "
                           f"or 'same'. Got {randomness}")


class _NoRandomness:
    """Stands in for the default generator's NumPy Generator in 'error' mode: any draw
    raises torch's message."""

    def __getattr__(self, name):
        raise RuntimeError("vmap: called random operation while in randomness error mode. "
                           "Please either use the 'same' or 'different' randomness flags on "
                           "vmap or perform the randomness operation out of vmap")


class randomness_scope:
    """Context for running func once per element under a randomness mode; call
    `.element()` before each element (rewinds the generator in 'same' mode)."""

    def __init__(self, randomness):
        self.mode = randomness
        self.saved = None
        self.state = None

    def __enter__(self):
        rng = default_generator.rng
        if isinstance(rng, _NoRandomness):
            return self  # inside an outer 'error' vmap: it stays in force
        if self.mode == "error":
            self.saved = rng
            default_generator.rng = _NoRandomness()
        elif self.mode == "same":
            self.state = default_generator.get_state()
        return self

    def element(self):
        if self.state is not None:
            default_generator.set_state(self.state)

    def __exit__(self, *exc):
        if self.saved is not None:
            default_generator.rng = self.saved
        return False


def _fname(func):
    return getattr(func, "__name__", type(func).__name__)


def _in_dims_per_leaf(func, in_dims, args, leaves):
    """The in_dim of every leaf of args, validated as torch does."""
    name = _fname(func)
    head = f"vmap({name}, in_dims={in_dims!r}, ...)(<inputs>)"
    if isinstance(in_dims, int) and not isinstance(in_dims, bool):
        dims = [in_dims] * len(leaves)
    elif isinstance(in_dims, tuple):
        dims = pytree.broadcast_prefix(in_dims, tuple(args),
                                       is_leaf=lambda p: p is None or isinstance(p, int))
        if dims is None:
            raise ValueError(f"{head}: in_dims is not compatible with the structure of "
                             f"`inputs`. in_dims has structure {pytree.flatten(in_dims)[1]!r}"
                             f" but inputs has structure {pytree.flatten(tuple(args))[1]!r}.")
    else:
        raise ValueError(f"{head}: expected `in_dims` to be int or a (potentially nested) "
                         f"tuple matching the structure of inputs, got: {type(in_dims)}.")
    for d, x in zip(dims, leaves):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(f"{head}: in_dims must be None or int for every input, got "
                             f"{d!r} ({type(d)})")
        if not isinstance(x, Tensor):
            raise ValueError(f"{head}: Got in_dim={d} for an input but the input is of type "
                             f"{type(x)}. We cannot vmap over non-Tensor arguments, please "
                             f"use None as the respective in_dim")
        nd = x._data.ndim
        if not -nd <= d < nd:
            raise ValueError(f"{head}: Got in_dim={d} for some input, but that input is a "
                             f"Tensor of dimensionality {nd} so expected in_dim to satisfy "
                             f"-{nd} <= in_dim < {nd}.")
    return dims


def _batch_size(leaves, dims):
    sizes = [x._data.shape[d] for x, d in zip(leaves, dims) if d is not None]
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if len(set(sizes)) != 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _slices(x, d, n):
    """The n slices of x along d (views); for an empty batch, one zero slice that only
    serves to learn the shapes of func's outputs."""
    if n:
        return x.unbind(d)
    shape = x._data.shape[:d % x._data.ndim] + x._data.shape[d % x._data.ndim + 1:]
    return (Tensor._of(np.zeros(shape, dtype=x._data.dtype)),)


def _same(values):
    """True when the per-element values of an out_dims=None output do not vary."""
    first = values[0]
    for v in values[1:]:
        if v is first:
            continue
        if isinstance(first, Tensor) and isinstance(v, Tensor):
            if first._data.shape != v._data.shape or not np.array_equal(first._data, v._data,
                                                                      equal_nan=True):
                return False
        elif isinstance(first, Tensor) or isinstance(v, Tensor) or not v == first:
            return False
    return True


def _combine(func, outs, out_dims, n):
    """Stack the per-element outputs (pytrees) along out_dims."""
    name = _fname(func)
    leaves0, spec = pytree.flatten(outs[0])
    per_elem = [leaves0]
    for o in outs[1:]:
        lv, s = pytree.flatten(o)
        if s != spec:
            raise ValueError(f"vmap({name}, ...): `{name}` must return the same structure "
                             f"for every batch element, got {spec!r} and {s!r}")
        per_elem.append(lv)
    if isinstance(out_dims, int) and not isinstance(out_dims, bool):
        dims = [out_dims] * len(leaves0)
    elif out_dims is None:
        dims = [None] * len(leaves0)
    elif isinstance(out_dims, (tuple, list)):
        dims = pytree.broadcast_prefix(out_dims, outs[0],
                                       is_leaf=lambda p: p is None or isinstance(p, int))
        if dims is None:
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims!r})(<inputs>): out_dims is "
                             f"not compatible with the structure of `outputs`. out_dims has "
                             f"structure {pytree.flatten(out_dims)[1]!r} but outputs has "
                             f"structure {spec!r}.")
    else:
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims!r}): `out_dims` must be an int, "
                         f"None or a python collection of ints representing where in the "
                         f"outputs the vmapped dimension should appear.")
    result = []
    for k, d in enumerate(dims):
        values = [lv[k] for lv in per_elem]
        if d is None:
            if not _same(values):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 f"when out_dim is None")
            result.append(values[0])
            continue
        bad = [v for v in values if not isinstance(v, Tensor)]
        if bad:
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(bad[0])}. Did you mean to set out_dims= to None for "
                             f"output?")
        if n == 0:  # values holds the output of one zero slice: keep only its shape
            v = values[0]._data
            nd = v.ndim + 1
            if not -nd <= d < nd:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-nd}, {nd - 1}], but got {d})")
            result.append(Tensor._of(np.zeros(v.shape[:d % nd] + (0,) + v.shape[d % nd:],
                                          dtype=v.dtype)))
        else:
            result.append(_shape.stack(values, d))
    return pytree.unflatten(result, spec)


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """vmap(func)(*args): func mapped over dimension in_dims of its inputs (see the module
    docstring); keyword arguments are passed to every call unmapped."""
    check_randomness(randomness)
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    if not callable(func):
        raise RuntimeError(f"vmap: func must be callable, got {type(func).__name__}")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        if not args:
            raise ValueError(f"vmap({_fname(func)})(<inputs>): got no inputs. Maybe you forgot "
                             f"to add inputs, or you are trying to vmap over a function with "
                             f"no inputs. The latter is unsupported.")
        leaves, spec = pytree.flatten(tuple(args))
        dims = _in_dims_per_leaf(func, in_dims, args, leaves)
        n = _batch_size(leaves, dims)
        parts = [None if d is None else _slices(x, d, n) for x, d in zip(leaves, dims)]
        outs = []
        with randomness_scope(randomness) as scope:
            for i in range(max(n, 1)):
                scope.element()
                el = [x if p is None else p[i] for x, p in zip(leaves, parts)]
                outs.append(func(*pytree.unflatten(el, spec), **kwargs))
        return _combine(func, outs, out_dims, n)

    return wrapped
