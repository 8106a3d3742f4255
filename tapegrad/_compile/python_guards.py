"""Guards on the Python values a captured call read: globals and closure variables.

A replay does not run the forward's Python, so every Python value that forward read is
taken as given: `scale = 2.0; f = tg.compile(lambda x: x * scale)` multiplies by the
`scale` of the captured call. torch.compile guards on each such value; so does this.

While a call is captured, `watch()` (a profile hook: this thread, the captured call only)
sees every Python frame that runs. For each frame of the user's code (not the library's,
not the standard library's or an installed package's), the guards are the globals its
code reads as globals (LOAD_GLOBAL) and its closure variables (`co_freevars`,
read through the function's cells), each with the value it had when the frame started.
`Guards.check()` reads them again before a replay: a plain value (number, string, bool,
None, a tuple of those) must be equal (same type), anything else the same object.

A module among those values is guarded by its state too (guards.py's key of it: each
submodule's `training` and plain attributes, its parameters' identity, shape, dtype,
requires_grad): a compiled training step that reads `model` as a global replays only
while the model is as captured.

A side effect in the user's code the replay would not repeat ends the capture (the key
runs eagerly): storing a global, a closure variable or an attribute (STORE_GLOBAL,
STORE_DEREF, STORE_ATTR, found in the code of each frame that ran), `print`. The
library's own effects are steps of the tape (host steps, call steps).

Limits: what is read through an object is not guarded (`cfg.scale` of a global `cfg`
is guarded as the object `cfg`, not its attribute; a module's plain attributes are,
by guards.py); a closure cell of a function made anew per call is guarded through the
functions found holding that code (gc), by identity of their cell contents. A function
nested in one the call ran (a comprehension or generator expression, a lambda or inner
function of the step) has no guards of its own closure: its free variables are that
run's variables, computed by the call or guarded where that function read them.
"""
import builtins
import dis
import gc
import os
import sys
import sysconfig

from ..core import tape as _tape
from ..core.state import state
from ..core.tensor_base import TensorBase
from ..nn.modules.module import Module
from . import guards as _guards

_MISSING = object()
_print = builtins.print
_PLAIN = frozenset((int, float, bool, str, bytes, complex, type(None)))
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the tapegrad package
_LIBS = tuple({os.path.realpath(p) + os.sep for p in (
    sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("purelib"),
    sysconfig.get_paths().get("platlib")) if p}) + (_HERE + os.sep,)


def _user_code(code, cache={}):
    """True for code the user wrote (not tapegrad's, the standard library's or an
    installed package's; `<stdin>`, notebooks and scripts are the user's)."""
    got = cache.get(code.co_filename)
    if got is None:
        f = code.co_filename
        real = os.path.realpath(f) if not f.startswith("<") else f
        got = cache[f] = not (real.startswith(_LIBS) or f.startswith("<frozen"))
    return got


def _plain(v):
    t = type(v)
    if t in _PLAIN:
        return True
    return t is tuple and all(_plain(x) for x in v)


class Guards:
    """The Python values one capture read. `items`: (namespace dict or cell, name or
    None, value, plain); `modules`: (module, its guards.py key) of the modules among
    the values."""

    __slots__ = ("items", "where", "modules", "epoch", "fixed")

    def __init__(self):
        self.fixed = []  # the compiled function's default argument values (held as is)
        self.items = []
        self.where = []  # for messages: "global scale", "closure variable c"
        self.modules = []
        self.epoch = None  # core/tape.py's structure epoch when the module keys held

    def add_fixed(self, value):
        """A default argument value of the compiled function: the same object on every
        call (not re-read); a module's state is guarded all the same."""
        self.fixed.append(value)
        self._module(value)

    def add(self, box, name, value, where):
        self.items.append((box, name, value, _plain(value)))
        self.where.append(where)
        self._module(value)

    def _module(self, value):
        if isinstance(value, Module) and all(m is not value for m, _ in self.modules):
            self.modules.append((value, _module_key(value)))
            self.epoch = _tape.epoch[0]

    def check(self):
        """The first guard that fails (its description), or None: all hold."""
        k = 0
        for box, name, want, plain in self.items:
            if name is None:
                try:
                    v = box.cell_contents
                except ValueError:
                    v = _MISSING
            else:
                v = box.get(name, _MISSING)
            if v is not want and (not plain or type(v) is not type(want) or v != want):
                return self.where[k]
            k += 1
        if self.modules and self.epoch != _tape.epoch[0]:
            for m, key in self.modules:
                if _module_key(m) != key:
                    return f"the state of module {type(m).__name__}"
            self.epoch = _tape.epoch[0]  # nothing they show changed: skip until the next
        return None

    def tensors(self):
        """The tensors these guards hold: the values, the modules' parameters and
        buffers, the optimizers' parameters."""
        out = []
        for v in [item[2] for item in self.items] + self.fixed:
            if isinstance(v, TensorBase):
                out.append(v)
            groups = getattr(v, "param_groups", None)
            if type(groups) is list:
                for g in groups:
                    out.extend(g.get("params", ()))
        for m, _ in self.modules:
            _guards._module_part(m, [], out)
        return out


def _module_key(m):
    parts, ext = [], []
    if not _guards._module_part(m, parts, ext):
        return None  # (hooks: guards.py keeps such calls eager; here only a change counts)
    return tuple(parts)


def _global_reads(code, cache={}):
    """The names `code` reads as globals (LOAD_GLOBAL/LOAD_NAME: not the attribute and
    method names co_names also holds: `opt.step()` reads no global `step`)."""
    got = cache.get(code)
    if got is None:
        got = cache[code] = tuple(dict.fromkeys(
            ins.argval for ins in dis.get_instructions(code)
            if ins.opname in ("LOAD_GLOBAL", "LOAD_NAME")))
    return got


_EFFECTS = frozenset(("STORE_GLOBAL", "STORE_ATTR", "DELETE_GLOBAL", "DELETE_ATTR",
                      "DELETE_DEREF"))


def _side_effect(code, cache={}):
    """The first store in `code` a replay would not repeat (text), or None."""
    got = cache.get(code, 0)
    if got == 0:
        got = None
        for ins in dis.get_instructions(code):
            if ins.opname in _EFFECTS or (ins.opname == "STORE_DEREF"
                                          and ins.argval in code.co_freevars):
                got = (f"{ins.opname} {ins.argval} in {code.co_name} "
                       f"({os.path.basename(code.co_filename)}:{ins.positions.lineno})")
                break
        cache[code] = got
    return got


class watch:
    """`with watch(fn) as guards:` collects the guards of the Python the block runs."""

    def __init__(self, fn, brk=None):
        self.fn = getattr(fn, "__func__", fn)
        self.brk = brk
        self.guards = Guards()
        self.seen = set()

    def __enter__(self):
        for v in (getattr(self.fn, "__defaults__", None) or ()) + tuple(
                (getattr(self.fn, "__kwdefaults__", None) or {}).values()):
            self.guards.add_fixed(v)
        self.prev = sys.getprofile()
        if self.prev is not None:
            # a profiler (cProfile) holds the hook: without it the values the call reads
            # are unknown, so the capture must not be replayed
            if self.brk is not None:
                self.brk("sys.setprofile is in use (a profiler): the Python values the "
                         "call reads cannot be guarded")
            return self.guards
        brk = self.brk

        def profile(frame, event, arg):
            if state.tape is None:
                pass  # a call step or a backward runs (the tape is off): replayed as such
            elif event == "call":
                code = frame.f_code
                if code not in self.seen:
                    self.seen.add(code)
                    if _user_code(code):
                        self._frame(frame, code)
                        effect = _side_effect(code)
                        if effect is not None and brk is not None:
                            brk("a Python side effect the replay would not repeat: " + effect)
            elif event == "c_call" and arg is _print and brk is not None:
                if _user_code(frame.f_code):
                    brk("print() in the compiled call (a replay would not print)")
        sys.setprofile(profile)
        return self.guards

    def __exit__(self, *exc):
        if self.prev is None:
            sys.setprofile(None)
        return False

    def _frame(self, frame, code):
        g = frame.f_globals
        for name in _global_reads(code):
            if name in g:
                self.guards.add(g, name, g[name], f"global {name}")
        if code.co_freevars and not self._made_here(code):
            for fn in self._functions(code, frame):
                for name, cell in zip(code.co_freevars, fn.__closure__):
                    try:
                        v = cell.cell_contents
                    except ValueError:
                        v = _MISSING
                    self.guards.add(cell, None, v, f"closure variable {name}")

    def _made_here(self, code):
        """Is `code` a function nested in one this capture ran (a comprehension or a
        generator expression, which Python 3.11 runs as a function of its own, a lambda
        or an inner function of the step)? Its free variables are then that run's own
        variables: values the call computes (a list of tensors, an intermediate), which
        are no guard, or its closure variables, guarded where that function read them.
        Guarding them by identity would fail on every call (a new list each time) and
        would hold the call's tensors (a capture that cannot replay)."""
        return any(code in c.co_consts for c in self.seen if c is not code)

    def _functions(self, code, frame):
        """The function objects running `code` in `frame`: the compiled one, or those gc
        finds holding the code whose cells hold what the frame sees."""
        fn = self.fn
        if getattr(fn, "__code__", None) is code:
            return [fn]
        loc = frame.f_locals
        out = []
        for r in gc.get_referrers(code):
            if (getattr(r, "__code__", None) is code and r.__closure__ is not None
                    and all(_cell(c) is loc.get(n, _MISSING)
                            for n, c in zip(code.co_freevars, r.__closure__))):
                out.append(r)
        return out


def _cell(c):
    try:
        return c.cell_contents
    except ValueError:
        return _MISSING
