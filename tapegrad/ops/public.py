"""`public`: the one declaration of a public op, from which its variants follow.

A family file (`ops/pointwise.py`, `ops/reductions.py`, ...) declares each op once, next
to its definition:

    exp = public(unary(R.exp), out=True)       # tg.exp(x, out=y); Tensor.exp is this function
    exp_ = public_inplace(exp)                 # tg.exp_(x) and Tensor.exp_

    @public(out=True, aliases=("absolute",))
    def abs(input): ...

What follows from a declaration:
- **its name**: `__name__`, `__qualname__` and the code object's name become the torch
  name, so tracebacks and profiles say `exp`, never `f` or `_unary.<locals>.f`;
- **the `out=` form** (`out=True`): `tg.exp` takes torch's `out=` keyword
  (`out_arg.with_out`). The plain function stays what the module holds, so the Tensor
  method and the library's own calls run without the wrapper;
- **the in-place form** (`public_inplace(fn)`): `fn(self, ...)` computed out of place and
  written into self by `inplace.write_into` — the one in-place mechanism (leaf check,
  version counter, rebasing a view's base, torch's cast check). An op whose in-place form
  needs a NumPy fast path (`add_`, `mul_`, ...: the optimizers' hot path) writes it by hand
  and declares it with `public(add_)`;
- **the copying twin of a view** (`public_copy(view)`): `torch.<view>_copy`, the view
  followed by a contiguous clone of each output (a tensor that shares nothing with its
  input), with `out=`;
- **aliases** (`aliases=("absolute",)`): other torch names of the same function;
- **the package root**: `EXPORTS` maps every declared name to what `tg.<name>` is;
  `tapegrad/__init__.py` takes them all, so a declared op cannot be missing from `tg`;
  `METHODS` lists the names `Tensor` must carry (`method=False` for functions torch has
  no method of, e.g. `cat`), which tests/test_declarations.py checks against the class.

The Tensor method itself is one line in its family's section of `class Tensor`
(`_tensor.py`), so a reader of the class sees the whole API.
"""
import sys

from ..core.record import apply
from .inplace import write_into
from .out_arg import with_out
from .rules import shape as _shape_rules

EXPORTS = {}  # torch name -> the callable `tg.<name>` is (the out= form where declared)
METHODS = {}  # torch name -> the function `Tensor.<name>` must be
FAMILIES = {}  # torch name -> the module that declares it (the op's home), methods included


def _rename(fn, name):
    """Give `fn` (often made by a factory: `_unary.<locals>.f`) the torch name everywhere
    a name shows: repr, tracebacks (the code object's name), profiles."""
    fn.__name__ = name
    fn.__qualname__ = name
    code = getattr(fn, "__code__", None)
    if code is not None and code.co_name != name:
        fn.__code__ = code.replace(co_name=name, co_qualname=name)
    return fn


def _register(fn, name, out, method, aliases, module, function=True):
    for n in (name,) + tuple(aliases):
        if n in FAMILIES:
            raise RuntimeError(f"ops: {n!r} is declared twice ({FAMILIES[n]} and {module})")
        if function:
            EXPORTS[n] = with_out(fn, n, **{f: True for f in out}) \
                if isinstance(out, tuple) else with_out(fn, n) if out else fn
        FAMILIES[n] = module
        if method:
            METHODS[n] = fn


def public(fn=None, *, name=None, out=False, method=True, function=True, aliases=()):
    """Declare `fn` as the public op `name` (default: fn's name); usable as a decorator
    with or without arguments. Returns `fn` itself, renamed. `function=False`: a Tensor
    method only (`x.add_`, `x.view`: torch has no `torch.view`). `out=("disjoint",
    "exact")`: the out= form with torch's stricter checks of some ops (out_arg.with_out:
    no overlap with an input, no dtype cast)."""
    module = sys._getframe(1).f_globals.get("__name__")  # the family file declaring it

    def declare(f):
        n = name or f.__name__
        if "<locals>" in getattr(f, "__qualname__", ""):
            f.__module__ = module  # made by a factory elsewhere: its home is the family
        _register(_rename(f, n), n, out, method, aliases, module, function)
        return f
    return declare if fn is None else declare(fn)


def public_inplace(fn, *, name=None, method=True, function=True, aliases=()):
    """Declare the in-place form of the public function `fn`: `fn_(self, *args, **kw)`
    computes `fn(self, *args, **kw)` and writes it into self. Returns the new function."""
    def inplace_form(self, *args, **kwargs):
        return write_into(self, lambda x: fn(x, *args, **kwargs), args, kwargs)

    n = name or fn.__name__ + "_"
    inplace_form.__doc__ = f"{fn.__name__} in place: self = {fn.__name__}(self, ...); returns self."
    module = sys._getframe(1).f_globals.get("__name__")
    inplace_form.__module__ = module
    _register(_rename(inplace_form, n), n, False, method, aliases, module, function)
    return inplace_form


def public_copy(view, *, name=None, method=False):
    """Declare `torch.<view>_copy`: `view(input, ...)` then a contiguous clone of each
    output (torch's view_copy ops: what the view computes, in memory of its own). Recorded
    as the view and a clone, so the gradient is the view's. Returns the new function."""
    def copy_form(input, *args, **kwargs):
        res = view(input, *args, **kwargs)
        if isinstance(res, (tuple, list)):  # unbind, split_with_sizes: each piece copied
            return tuple(apply(_shape_rules.clone, r) for r in res)
        return apply(_shape_rules.clone, res)

    n = name or view.__name__ + "_copy"
    copy_form.__doc__ = (f"Performs the same operation as {n[:-5]}, but every output is a "
                         "new contiguous tensor, not a view.")
    module = sys._getframe(1).f_globals.get("__name__")
    copy_form.__module__ = module
    _register(_rename(copy_form, n), n, True, method, (), module)
    return copy_form
