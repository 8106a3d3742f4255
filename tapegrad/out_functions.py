"""The public functions that take PyTorch's `out=` keyword (ops/out_arg.with_out).

tapegrad/__init__.py takes these names from here, so `tg.add(a, b, out=c)` works while
the op functions themselves (and the Tensor methods, which have no `out=`) stay as
they are.
"""
from . import creation as _C
from .ops import comparison, indexing, pointwise, products, reductions, shape, sorting, special
from .ops.out_arg import with_out


def _op(n):
    for m in (pointwise, comparison, special, reductions, sorting, shape, indexing, products):
        if hasattr(m, n):
            return getattr(m, n)
    raise AttributeError(n)

_FUNCTIONS = {
    **{n: _op(n) for n in (
        "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
        "matmul", "mm", "bmm", "sum", "mean", "prod", "exp", "log", "sqrt", "abs", "neg",
        "pow", "clamp", "clip", "where", "cumsum", "maximum", "minimum", "sigmoid", "tanh",
        "log1p", "expm1", "log2", "log10", "sin", "cos", "floor", "ceil", "trunc",
        "logsumexp", "remainder", "fmod")},
    **{n: _op(n) for n in ("cat", "concat", "concatenate", "stack")},
    **{n: _op(n) for n in ("tan", "asin", "arcsin", "acos", "arccos", "atan", "arctan",
                                   "atan2", "arctan2", "sinh", "cosh", "asinh", "arcsinh",
                                   "acosh", "arccosh", "atanh", "arctanh")},
    **{n: _op(n) for n in ("erf", "erfc", "erfinv", "round", "cumprod", "einsum",
                                    "nan_to_num", "histc", "square", "reciprocal", "median",
                                    "nanmedian")},
    # (values, indices) with a dim: out=(values, indices)
    **{n: _op(n) for n in ("max", "min", "amax", "amin", "argmax", "argmin", "std",
                                   "var", "rsqrt", "sign", "relu", "neg", "negative")},
    **{n: _op(n) for n in ("sort", "topk", "kthvalue", "argsort", "gather",
                                   "index_select", "masked_select")},
    **{n: getattr(_C, n) for n in ("zeros", "ones", "empty", "full", "arange", "linspace",
                                   "eye", "rand", "randn", "randint", "randperm")},
}

globals().update({n: with_out(f, n) for n, f in _FUNCTIONS.items()})
__all__ = sorted(_FUNCTIONS)
