"""Random sampling: bernoulli, multinomial, and the in-place random fills (normal_,
uniform_, exponential_, geometric_, cauchy_, log_normal_, random_)."""
import numbers
import warnings

import numpy as np

from .. import dtypes as _dt, random as _random
from .._device import check as _check_device
from ..core import tape as _tape
from ..core.record import apply
from ..core.tensor_base import TensorBase, like, new_tensor
from ..random import rng as _rng
from . import _args, pointwise as _pointwise
from ._args import _finish, _float_dtype, _size
from .inplace import _inplace
from .public import public
from .rules import pointwise as E, special as SP


# ---- random sampling ------------------------------------------------------------------------
@public(out=True)
def bernoulli(input, p=None, *, generator=None):
    """0/1 draws with probabilities `input` (or the number `p`), input's dtype."""
    x = _args._tensor(input, "bernoulli")
    if p is None and x.dtype.kind != "f":
        raise RuntimeError(f'"bernoulli_tensor_cpu_p_" not implemented for \'{_args._tname(x.dtype)}\'')
    probs = _args._np(x) if p is None else np.full(x.shape, float(p))
    if probs.size and (np.any(probs < 0) or np.any(probs > 1) or np.isnan(probs).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    u = _random.rng(generator).random(x.shape)
    if p is None and x.dtype.kind == "f":
        # recorded (gradient 0) when input requires grad, as torch's BernoulliBackward0
        return apply(SP.bernoulli, x, draws=u)
    dt = x.dtype if x.dtype.kind == "f" else _dt.get_default_dtype()
    return like(x, (u < probs).astype(dt))


@public(function=False)
def bernoulli_(self, p=0.5, *, generator=None):
    """In place: each element becomes 1 with probability p (a number or a tensor)."""
    probs = _args._np(p) if isinstance(p, TensorBase) else p
    probs = np.broadcast_to(np.asarray(probs, dtype=np.float64), self.shape)
    if probs.size and (np.any(probs < 0) or np.any(probs > 1)):
        raise RuntimeError("bernoulli_ expects p to be in [0, 1], but got p="
                           + str(p if not isinstance(p, TensorBase) else "a tensor"))
    draws = (_random.rng(generator).random(self.shape) < probs).astype(self.dtype)
    return _pointwise.copy_(self, like(self, draws))


@public(out=("exact",))
def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Draw category indices from (rows of) non-negative weights, with tapegrad's RNG.

    With replacement: inverse CDF (searchsorted of uniforms). Without: the exponential
    race (the k smallest E_j / p_j, E_j ~ Exp(1)), which samples without replacement
    with probabilities proportional to p. Streams differ from PyTorch's.
    """
    p = _args._tensor(input)._data
    if p.dtype.kind != "f":
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{p.dtype}")
    if p.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    # (through tape.host: a tg.compile replay checks the weights and draws again)
    return _args._int64(input, _tape.host(_multinomial, p, int(num_samples),
                                          bool(replacement), generator))


def _multinomial(p, k, replacement, generator):
    one = p.ndim == 1
    p = np.atleast_2d(p).astype(np.float64)
    rows, n = p.shape
    if n > 2 ** 24:  # torch's limit (its sampler keeps category indices in float32)
        raise RuntimeError("number of categories cannot exceed 2^24")
    if k <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if not np.isfinite(p).all() or (p < 0).any():
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = p.sum(axis=1)
    if (total <= 0).any():
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    g = _random.rng(generator)
    if replacement:
        cdf = np.cumsum(p, axis=1) / total[:, None]
        cdf[:, -1] = 1.0
        u = g.random((rows, k))
        # one searchsorted over all rows: row r's cdf is shifted into [r, r + 1]
        off = np.arange(rows)[:, None]
        flat = np.searchsorted((cdf + off).ravel(), (u + off).ravel(), side="right")
        out = np.minimum(flat.reshape(rows, k) - off * n, n - 1)
    else:
        if k > n:
            raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                               "replacement")
        if ((p > 0).sum(axis=1) < k).any():
            raise RuntimeError("invalid multinomial distribution (with replacement=False, not "
                               "enough non-negative category to sample)")
        with np.errstate(divide="ignore"):
            keys = g.exponential(size=(rows, n)) / p
        out = np.argsort(keys, axis=1, kind="stable")[:, :k]
    return np.ascontiguousarray(out[0] if one else out, dtype=np.int64)




def _write(self, draws):
    return _pointwise.copy_(self, like(self, np.asarray(draws).astype(self._data.dtype)))


def _floating(self, kind_msg):
    if self._data.dtype.kind != "f":
        raise RuntimeError(kind_msg(self._data.dtype))


def _fmt(v):
    # torch prints 0 and -1 for the numbers 0.0 and -1.0, 0.5 as 0.5
    return repr(int(v)) if float(v).is_integer() else repr(float(v))


@public(function=False)
def exponential_(self, lambd=1.0, *, generator=None):
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    _floating(self, lambda d: "Exponential distribution is a continuous probability "
              "distribution. dtype must be a floating point but you specified "
              + _dt.torch_name(d))
    return _write(self, _random.rng(generator).exponential(1.0 / lambd, self._data.shape))


@public(function=False)
def geometric_(self, p, *, generator=None):
    """The number of Bernoulli(p) trials up to the first success: 1, 2, 3, ..."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    if self._data.dtype == np.bool_:
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    return _write(self, _random.rng(generator).geometric(p, self._data.shape))


@public(function=False)
def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    _floating(self, lambda d: "Cauchy distribution is a continuous probability distribution. "
              "dtype must be a floating point but you specified " + _dt.cpp_name(d))
    return _write(self, median + sigma * _random.rng(generator).standard_cauchy(self._data.shape))


@public(function=False)
def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_fmt(std)}")
    if self._data.dtype.kind != "f":
        raise NotImplementedError(f"\"log_normal_cpu\" not implemented for "
                                  f"'{_dt.torch_name(self._data.dtype)}'")
    return _write(self, _random.rng(generator).lognormal(mean, std, self._data.shape))


_RANDOM_SIGNATURES = (" * (*, torch.Generator generator = None)\n"
                      " * (int from, int to, *, torch.Generator generator = None)\n"
                      " * (int to, *, torch.Generator generator = None)\n")


_FLOAT_RANGE = ("{what} is out of bounds [-(2^{digits}), 2^{digits}]. Due to precision "
                "limitations {name} can support discrete uniform distribution only within "
                "this range. This warning will become an error in version 1.7 release, please "
                "fix the code in advance")


def _is_int(v):
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool)


def _random_args(args, kwargs):
    """(from, to) from torch's three overloads: (), (to), (from, to) with to=None allowed."""
    if len(args) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(args)} were given")
    vals = dict(zip(("to",) if len(args) == 1 and not kwargs else ("from", "to"), args),
                **kwargs)
    ok = not set(vals) - {"from", "to"} and all(
        _is_int(v) or (k == "to" and v is None and "from" in vals) for k, v in vals.items())
    if not ok:
        got = ", ".join([type(v).__name__ for v in args]
                        + [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
        got += ", " if kwargs else ""
        raise TypeError(f"random_() received an invalid combination of arguments - got ({got}), "
                        f"but expected one of:\n{_RANDOM_SIGNATURES}")
    return vals.get("from", 0), vals.get("to") if vals else None


def _check_bounds(what, v, dt, name):
    """Integer dtypes (and float16's range) refuse a bound they cannot hold; float dtypes
    warn outside +-2^digits, where not every integer is representable (torch's rules)."""
    if dt.kind == "f":
        if abs(v) > float(np.finfo(dt).max):
            raise RuntimeError(f"{what} is out of bounds for {name}")
        digits = np.finfo(dt).nmant + 1
        if abs(v) > 2 ** digits:
            warnings.warn(_FLOAT_RANGE.format(what=what, digits=digits, name=name),
                          UserWarning, stacklevel=3)
        return
    low, high = (0, 1) if dt == np.bool_ else (int(np.iinfo(dt).min), int(np.iinfo(dt).max))
    if not low <= v <= high:
        raise RuntimeError(f"{what} is out of bounds for {name}")


@public(function=False)
def random_(self, *args, generator=None, **kwargs):
    """random_(): [0, 2^digits] for floats, [0, max] for integers; random_(to): [0, to);
    random_(from, to): [from, to) (to=None: up to that default top). `from` is a Python
    keyword, so random_(**{'from': 1, 'to': 4}) is its keyword form, as in torch."""
    lo, hi = _random_args(args, kwargs)
    dt = self._data.dtype
    name = _dt.cpp_name(dt)
    if dt.kind == "f":
        top = 2 ** (np.finfo(dt).nmant + 1)      # 0..2^digits are exact in the dtype
    else:
        top = 1 if dt == np.bool_ else int(np.iinfo(dt).max)
    if hi is None:                              # the default top is included
        _check_bounds("from", lo, dt, name)
        if lo > top:
            raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal "
                               f"to 'to_inc' casted to dtype, but got from={lo} > to_inc={top}")
        hi_incl = top
    else:
        if lo >= hi:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={lo} >= to={hi}")
        _check_bounds("from", lo, dt, name)
        _check_bounds("to - 1", hi - 1, dt, name)
        hi_incl = hi - 1
    draws = _random.rng(generator).integers(lo, hi_incl, size=self._data.shape, endpoint=True)
    return _write(self, draws)


# ---- random fills (no gradient w.r.t. anything: the old value gets zeros) -----------
@public(function=False)
def normal_(self, mean=0.0, std=1.0, *, generator=None):
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    arr = _random.rng(generator).normal(mean, std, size=self._data.shape)
    return _random_fill(self, arr)


@public(function=False)
def uniform_(self, a=0.0, b=1.0, *, generator=None):
    dt = self._data.dtype
    if dt.kind == "f":  # torch's check_uniform_bounds (integer dtypes: _random_fill refuses)
        top, name = float(np.finfo(dt).max), _dt.cpp_name(dt)
        for what, v in (("from", a), ("to", b)):
            if not -top <= v <= top:
                raise RuntimeError(f"{what} is out of bounds for {name}")
        if a > b:
            raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                               f"from={_fmt(a)} > to={_fmt(b)}")
        if b - a > top:
            raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                               f"{name.capitalize()}>::max(), but found to={b:g} and "
                               f"from={a:g} which result in "
                               "to-from to exceed the limit")
    arr = _random.rng(generator).uniform(a, b, size=self._data.shape)
    return _random_fill(self, arr)


def _random_fill(self, arr):
    if self._data.dtype.kind != "f":
        raise RuntimeError(f"random fill expects a floating point tensor, got "
                           f"{_dt.name(self._data.dtype)}")
    arr = arr.astype(self._data.dtype, copy=False)

    def fast(out):
        np.copyto(out, arr)

    return _inplace(self, lambda x: apply(
        E.where, np.ones(x._data.shape, bool), arr, x), (),
        needs_old=False, fast=fast)


# ---- random tensors: rand, randn, randint, randperm (+ _like) ---------------------------
@public(out=True, method=False)
def rand(*size_args, size=None, generator=None, dtype=None, requires_grad=False,
         device=None):
    _check_device(device, "rand()")
    d = _float_dtype(dtype)
    shape = _size(size_args, size, "rand")
    return _finish(_tape.host(_draw_uniform, generator, shape, d), None, requires_grad)


@public(out=True, method=False)
def randn(*size_args, size=None, generator=None, dtype=None, requires_grad=False,
          device=None):
    _check_device(device, "randn()")
    d = _float_dtype(dtype)
    shape = _size(size_args, size, "randn")
    return _finish(_tape.host(_draw_normal, generator, shape, d), None, requires_grad)


# The draws of rand/randn/randint through tape.host: a tg.compile replay draws again, from
# the same generator, in eager's order (a VAE's `eps = torch.randn_like(std)`)
def _draw_uniform(generator, shape, dtype):
    return _rng(generator).random(shape).astype(dtype)


def _draw_normal(generator, shape, dtype):
    return _rng(generator).standard_normal(shape).astype(dtype)


def _draw_integers(generator, low, high, shape):
    return _rng(generator).integers(low, high, size=shape)


@public(out=True, method=False)
def randint(low=None, high=None, size=None, generator=None, dtype=None, requires_grad=False,
            device=None):
    """randint(high, size), randint(low, high, size) (positional or keyword), as torch."""
    _check_device(device, "randint()")
    if size is None and isinstance(high, (tuple, list)):
        low, high, size = 0, low, high          # torch's randint(high, size) overload
    if high is None:
        low, high = 0, low
    if low is None:
        low = 0                                 # randint(high=10, size=(3,))
    if high is None:
        raise TypeError("randint() missing required argument 'high'")
    if size is None:
        raise TypeError("randint() missing required argument 'size'")
    arr = _tape.host(_draw_integers, generator, low, high, tuple(size))
    return _finish(arr, _dt.as_dtype(dtype) or _dt.int64, requires_grad)


@public(out=True, method=False)
def randperm(n, generator=None, dtype=None, device=None):
    _check_device(device, "randperm()")
    return _finish(_rng(generator).permutation(int(n)), _dt.as_dtype(dtype) or _dt.int64, False)


@public(method=False)
def rand_like(input, *, generator=None, dtype=None, layout=None, device=None,
              requires_grad=False, memory_format=None):
    _check_device(device, "rand_like()")
    return rand(*input.shape, generator=generator, dtype=dtype or input.dtype,
                requires_grad=requires_grad)


@public(method=False)
def randn_like(input, *, generator=None, dtype=None, layout=None, device=None,
               requires_grad=False, memory_format=None):
    _check_device(device, "randn_like()")
    return randn(*input.shape, generator=generator, dtype=dtype or input.dtype,
                 requires_grad=requires_grad)


@public(method=False)
def randint_like(input, low, high=None, *, generator=None, dtype=None, layout=None,
                 device=None, requires_grad=False, memory_format=None):
    _check_device(device, "randint_like()")
    return randint(low, high, size=input.shape, generator=generator, dtype=dtype or input.dtype,
                   requires_grad=requires_grad)


# ---- torch.normal ----------------------------------------------------------------------
# torch.normal: normal draws with tensor or number mean and std, all four overloads.
# 
#     normal(mean: Tensor, std: Tensor)      shape: the two broadcast; dtype: mean's
#     normal(mean: Tensor, std: float = 1)   mean's shape and dtype
#     normal(mean: float, std: Tensor)       std's shape and dtype
#     normal(mean: float, std: float, size, *, dtype, requires_grad)
# 
# each with `generator=` and `out=`. As in torch, the result of a mean or std that requires
# grad requires grad, and its gradient w.r.t. them is 0 (a sample, not a
# reparameterization: write `mean + std * tg.randn_like(std)` for one).
_OVERLOADS = (
    " * (Tensor mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (Tensor mean, float std = 1, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, Tensor std, *, torch.Generator generator = None, Tensor out = None)\n"
    " * (float mean, float std, tuple of ints size, *, torch.Generator generator = None, "
    "Tensor out = None, torch.dtype dtype = None, torch.layout layout = None, "
    "torch.device device = None, bool pin_memory = False, bool requires_grad = False)\n")


def _number(v):
    return isinstance(v, numbers.Real) and not isinstance(v, TensorBase)


def _invalid(mean, std, size):
    got = ", ".join(type(v).__name__ for v in (mean, std) + (() if size is None else (size,)))
    return TypeError(f"normal() received an invalid combination of arguments - got ({got}), "
                     f"but expected one of:\n{_OVERLOADS}")


def _check_std(std):
    if isinstance(std, TensorBase):
        if np.any(std._data < 0):
            raise RuntimeError("normal expects all elements of std >= 0.0")
    elif std < 0:
        s = float(std)
        raise RuntimeError(f"normal expects std >= 0.0, but found std "
                           f"{int(s) if s.is_integer() else s}")


def _broadcast(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        sa, sb = shapes
        n = max(len(sa), len(sb))
        for i in range(1, min(len(sa), len(sb)) + 1):
            if sa[-i] != sb[-i] and 1 not in (sa[-i], sb[-i]):
                raise RuntimeError(f"The size of tensor a ({sa[-i]}) must match the size of "
                                   f"tensor b ({sb[-i]}) at non-singleton dimension {n - i}") \
                    from None
        raise


def _check_float(dtype):
    if dtype.kind != "f":
        raise NotImplementedError(f"\"normal_kernel_cpu\" not implemented for "
                                  f"'{_dt.torch_name(dtype)}'")


def _normal(mean, std=1.0, size=None, *, generator=None, dtype=None, requires_grad=False,
            device=None, layout=None, pin_memory=False):
    tensors = [v for v in (mean, std) if isinstance(v, TensorBase)]
    if not tensors:
        if size is None or not (_number(mean) and _number(std)) \
                or not isinstance(size, (tuple, list)):
            raise _invalid(mean, std, size)
        _check_device(device, "normal()")
        d = _dt.as_dtype(dtype) or _dt.get_default_dtype()
        _check_float(d)
        _check_std(std)
        arr = _rng(generator).normal(float(mean), float(std), size=tuple(int(s) for s in size))
        return new_tensor(arr.astype(d), requires_grad=requires_grad)
    if size is not None or dtype is not None or requires_grad:
        raise _invalid(mean, std, size)
    for v in (mean, std):
        if not isinstance(v, TensorBase) and not _number(v):
            raise _invalid(mean, std, size)
    d = mean.dtype if isinstance(mean, TensorBase) else std.dtype
    _check_float(d)
    _check_std(std)
    m = mean._data if isinstance(mean, TensorBase) else mean
    s = std._data if isinstance(std, TensorBase) else std
    shape = _broadcast(*(t._data.shape for t in tensors))
    arr = (m + s * _rng(generator).standard_normal(shape)).astype(d)
    out = like(tensors[0], arr)
    # torch's NormalBackward gives mean and std a gradient of 0: where(True, sample, t)
    # records exactly that (the value is the sample; t's share is zeros of its shape)
    for t in tensors:
        if t._rg:      # (cast first: where would promote to t's dtype)
            out = apply(E.where, np.ones(shape, bool), out, t if t.dtype == d else t.to(d))
    return out


normal = public(_normal, name="normal", out=True, method=False)
