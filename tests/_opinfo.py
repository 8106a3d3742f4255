"""Op-database machinery: `OpInfo`, `Sample`, input domains and sample helpers.

The entries themselves live in `tests/opdb/<family>.py` (one module per op family,
each defining a list `ENTRIES`); `opdb.OP_DB` collects them all. This file only holds
the shared vocabulary, so that family files can `from _opinfo import OpInfo, Sample,
...` without importing opdb (no import cycle).

An entry's functions are called as `tg_fn(*args, **kwargs)` / `torch_fn(*args, **kwargs)`
with the SAME sample: NumPy float arrays become tensors (requiring grad unless the
sample says otherwise), bool/int arrays become constant tensors, Python numbers stay
numbers. Most entries are written once for both libraries with `both(lambda lib, ...)`.
"""
import dataclasses
import functools
from typing import Any, Callable, Optional

import numpy as np
import torch
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tapegrad as tg


# ---- samples --------------------------------------------------------------------
@dataclasses.dataclass
class Sample:
    """One call: positional args (arrays / numbers), keyword args, and what to check.

    nograd:    indices of float array args that must NOT require grad
    gradcheck: False when the point is not differentiable (a tie, a kink, base 0 ...):
               values and gradients are still compared with PyTorch there, but not
               with finite differences
    note:      why the sample exists (shows in the test id)
    """
    args: tuple
    kwargs: dict = dataclasses.field(default_factory=dict)
    nograd: tuple = ()
    gradcheck: bool = True
    note: str = ""

    def id(self):
        def d(a):
            if isinstance(a, np.ndarray):
                return "x".join(map(str, a.shape)) or "0d"
            return repr(a)
        s = ",".join(d(a) for a in self.args)
        if self.kwargs:
            s += "|" + ",".join(f"{k}={v}" for k, v in self.kwargs.items())
        if self.note:
            s += "|" + self.note
        return s


# ---- input domains ----------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Domain:
    """Where an op's input values may lie.

    sample(rng, shape) -> float64 array for fixed samples (gradcheck-safe: away from
    kinks and ties when `separated`); lo/hi bound the values hypothesis draws, and
    `fix` maps a drawn array into the domain (e.g. pushes values away from zero).
    """
    name: str
    lo: float
    hi: float
    sample: Callable
    fix: Optional[Callable] = None

    def __post_init__(self):
        raw = self.sample  # always a float64 ndarray (0-d included), never a NumPy scalar
        object.__setattr__(self, "sample",
                           lambda rng, shape: np.asarray(raw(rng, shape), dtype=np.float64))

    def hyp_elements(self):
        # NOTE: no subnormals: there PyTorch's prod backward (result / x) underflows to 0
        return st.floats(self.lo, self.hi, allow_nan=False, allow_infinity=False, width=64,
                         allow_subnormal=False)


def _separated(rng, shape, offset=0.0):
    """Distinct values, none within 0.03 of zero or of each other (gradcheck-safe at kinks
    of abs/relu/clamp/max/min/maximum). `offset` shifts a second argument off the grid
    of the first so that maximum(x, y) never ties."""
    n = int(np.prod(shape)) if len(shape) else 1
    mags = (rng.permutation(n) + 1) * 0.0731 + offset
    signs = rng.choice([-1.0, 1.0], size=n)
    return (mags * signs).reshape(shape)


REAL = Domain("real", -3.0, 3.0, lambda rng, s: rng.uniform(-2.0, 2.0, s))
POSITIVE = Domain("positive", 0.25, 3.0, lambda rng, s: rng.uniform(0.5, 2.0, s))
NONZERO = Domain("nonzero", -3.0, 3.0,
                 lambda rng, s: rng.choice([-1.0, 1.0], s) * rng.uniform(0.5, 2.0, s),
                 fix=lambda a: np.where(a >= 0, a + 0.25, a - 0.25))
# Kinks and ties: gradcheck samples are separated; hypothesis still draws ties and zeros
# (there the values and gradients must match PyTorch's tie conventions exactly).
SEPARATED = Domain("separated", -3.0, 3.0, _separated)
SEPARATED_OFF = Domain("separated(offset)", -3.0, 3.0,
                       functools.partial(_separated, offset=0.0311))
# Spread: no slice is constant (std of a constant slice is 0 exactly in one library and a
# rounding-level number in the other under float32; the exact case is a fixed sample).
SPREAD = Domain("spread", -3.0, 3.0, lambda rng, s: rng.uniform(-2.0, 2.0, s),
                fix=lambda a: a + 0.05 * np.arange(a.size).reshape(a.shape))
SMALL = Domain("small", -1.5, 1.5, lambda rng, s: rng.uniform(-1.0, 1.0, s))


# ---- the entry ----------------------------------------------------------------------
@dataclasses.dataclass
class OpInfo:
    """One op-database entry.

    name:      a key of `tapegrad.ops.registry.OPS` (the derivative table), or the name of
               a public composite; several entries may share a name (use `variant`)
    tg_fn / torch_fn: the call, with the same signature in both libraries
    samples:   samples(rng) -> list of `Sample` (float64 arrays; the tests cast to float32)
    domain:    a Domain, or a tuple of Domains (one per positional arg)
    hyp:       hypothesis generator: hyp(draw) -> Sample (None: no hypothesis test)
    covers:    further table ops this entry exercises (e.g. "max" covers amax, max_dim)
    differentiable: False for argmax etc. (values only)
    gradgrad:  check second derivatives (gradgradcheck and grad-of-grad vs torch)
    f32_tol:   (rtol, atol) for the float32 comparison
    gradcheck_kw: extra arguments for gradcheck (eps/atol for lossy ops like cast)
    """
    name: str
    tg_fn: Callable
    torch_fn: Callable
    samples: Callable
    domain: Any = REAL
    hyp: Optional[Callable] = None
    variant: str = ""
    covers: tuple = ()
    differentiable: bool = True
    gradgrad: bool = True
    f32_tol: tuple = (1e-5, 1e-6)
    f64_tol: tuple = (1e-10, 1e-12)
    gradcheck_kw: dict = dataclasses.field(default_factory=dict)

    @property
    def id(self):
        return self.name + (f"[{self.variant}]" if self.variant else "")

    def domain_for(self, i):
        if isinstance(self.domain, tuple):
            return self.domain[i] if i < len(self.domain) else REAL
        return self.domain

    def ops(self):
        return (self.name,) + tuple(self.covers)


def both(fn):
    """fn(lib, *args, **kw) written once: returns (tg_fn, torch_fn)."""
    return functools.partial(fn, tg), functools.partial(fn, torch)


def op(name, fn, samples, **kw):
    """Shorthand: OpInfo(name, *both(fn), samples, **kw)."""
    return OpInfo(name, *both(fn), samples, **kw)


# ---- helpers that build samples --------------------------------------------------------
def arrays(rng, info, *shapes):
    """Arrays of the given shapes, each drawn from the entry's domain for that position."""
    return tuple(info.domain_for(i).sample(rng, s) for i, s in enumerate(shapes))


UNARY_SHAPES = [(), (1,), (5,), (2, 3), (3, 1), (1, 1, 4), (2, 3, 2)]
BINARY_SHAPES = [((), ()), ((3,), ()), ((), (2, 3)), ((2, 3), (2, 3)), ((2, 3), (3,)),
                 ((2, 1), (1, 3)), ((1,), (2, 3)), ((4, 1, 3), (2, 1)), ((3, 1), (3,))]


def unary_samples(shapes=UNARY_SHAPES, **kwargs):
    def gen(rng, info):
        return [Sample((info.domain_for(0).sample(rng, s),), dict(kwargs)) for s in shapes]
    return gen


def binary_samples(shapes=BINARY_SHAPES, **kwargs):
    def gen(rng, info):
        return [Sample(arrays(rng, info, a, b), dict(kwargs)) for a, b in shapes]
    return gen


# ---- hypothesis strategies ---------------------------------------------------------------
def draw_array(draw, shape, domain):
    a = draw(hnp.arrays(np.float64, shape, elements=domain.hyp_elements()))
    return domain.fix(a) if domain.fix is not None else a


def hyp_elementwise(n):
    """n mutually broadcastable float arrays (0-d and size-1 dims included)."""
    def hyp(draw, info):
        shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3,
                                                        min_side=1, max_side=4)).input_shapes
        return Sample(tuple(draw_array(draw, s, info.domain_for(i)) for i, s in enumerate(shapes)))
    return hyp


def hyp_reduce(dims="one", extra=None, min_dims=0, keepdim=True):
    """One array and a reduction: dims is "one" (a single dim), "tuple" (None, an int or
    a tuple), "required" (a single dim, never None). `extra(draw)` adds kwargs;
    keepdim=False for ops without that argument (softmax)."""
    def hyp(draw, info):
        shape = draw(hnp.array_shapes(min_dims=min_dims, max_dims=3, min_side=1, max_side=4)
                     if min_dims > 0 else
                     st.one_of(st.just(()), hnp.array_shapes(min_dims=1, max_dims=3,
                                                             min_side=1, max_side=4)))
        x = draw_array(draw, shape, info.domain_for(0))
        nd = max(len(shape), 1)
        kw = {}
        if dims == "tuple":
            d = draw(st.one_of(st.none(), st.integers(-nd, nd - 1),
                               st.lists(st.integers(0, nd - 1), min_size=1, max_size=nd,
                                        unique=True).map(tuple) if len(shape) else st.none()))
        elif dims == "required":
            d = draw(st.integers(-nd, nd - 1))
        else:
            d = draw(st.one_of(st.none(), st.integers(-nd, nd - 1)))
        if d is not None:
            kw["dim"] = d
            if keepdim:
                kw["keepdim"] = draw(st.booleans())
        if extra is not None:
            kw.update(extra(draw))
        return Sample((x,), kw)
    return hyp
