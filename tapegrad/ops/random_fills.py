"""In-place random fills from torch's distributions: random_, exponential_, geometric_,
cauchy_, log_normal_ (normal_ and uniform_ are in inplace.py, bernoulli_ in
functions_extra.py).

Each draws its numbers with NumPy's distribution of the same name from the tensor's
generator (`generator=`, else the global one: tg.manual_seed reproduces them), then
writes them with copy_, so the in-place rules (version counter, leaf refusal) are
copy_'s. The streams differ from torch's; the distributions and checks are torch's.
"""
import warnings

import numpy as np

from .. import dtypes as _dt
from .. import random as _random
from ..core.tensor_base import like
from . import inplace as IP


def _write(self, draws):
    return IP.copy_(self, like(self, np.asarray(draws).astype(self._data.dtype)))


def _floating(self, kind_msg):
    if self._data.dtype.kind != "f":
        raise RuntimeError(kind_msg(self._data.dtype))


def _fmt(v):
    # torch prints 0 and -1 for the numbers 0.0 and -1.0, 0.5 as 0.5
    return repr(int(v)) if float(v).is_integer() else repr(float(v))


def exponential_(self, lambd=1.0, *, generator=None):
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={_fmt(lambd)}")
    _floating(self, lambda d: "Exponential distribution is a continuous probability "
              "distribution. dtype must be a floating point but you specified "
              + _dt.torch_name(d))
    return _write(self, _random.rng(generator).exponential(1.0 / lambd, self._data.shape))


def geometric_(self, p, *, generator=None):
    """The number of Bernoulli(p) trials up to the first success: 1, 2, 3, ..."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_fmt(p)}")
    if self._data.dtype == np.bool_:
        raise NotImplementedError("\"geometric_cpu\" not implemented for 'Bool'")
    return _write(self, _random.rng(generator).geometric(p, self._data.shape))


def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_fmt(sigma)}")
    _floating(self, lambda d: "Cauchy distribution is a continuous probability distribution. "
              "dtype must be a floating point but you specified " + _dt.cpp_name(d))
    return _write(self, median + sigma * _random.rng(generator).standard_cauchy(self._data.shape))


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
