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
while the model is as captured. A dict, a list or an object of the user's classes
(a config, an argparse Namespace) is guarded by its contents too (`_fingerprint`: its
items or attributes, plain values by value, others by identity, nested dicts and lists
one level deeper): `cfg["lr"]`, `args.scale`, `counts[0]` are read afresh, as torch's
guards on them do.

A side effect in the user's code the replay would not repeat ends the capture (the key
runs eagerly): storing a global, a closure variable or an attribute (STORE_GLOBAL,
STORE_DEREF, STORE_ATTR, found in the code of each frame that ran), `print`, and a
change the call's own Python makes to such a dict, list or object, or to an optimizer's
param groups (`g["lr"] = lr`), between its call steps (capture.py checks at each call
step and at the end; an optimizer's or scheduler's own step may change them). So does a
value that changes by itself, read in Python: random.random() and the `random` module's
draws, NumPy's (np.random.rand's global generator, a Generator the call reads), a clock
(a replay would reuse the captured number; the library's random ops draw anew in their
host steps). The library's own effects are steps of the tape (host steps, call steps).

The library's optimizers and schedulers change their numbers as their steps run, so
those are no guards while only their own steps read them (a replay's optimizer step
reads lr afresh). A call whose own code reads them (`opt.param_groups[0]["lr"]`,
`sched.get_last_lr()`: `_RATE_READS` among its code's names) is guarded by the param
groups of every optimizer and the rates of every scheduler as the call found them (by
value, as torch guards a float lr: a scheduler that moves them re-captures, up to the
cache's limit); one that reads `sched.last_epoch` (`_EPOCH_READS`) by the epochs.

Limits: deeper than one level of nesting, and through the library's objects (an
optimizer's state, a generator), values are guarded by identity only; a closure cell of
a function made anew per call is guarded through the functions found holding that code
(gc), by identity of their cell contents. A function
nested in one the call ran (a comprehension or generator expression, a lambda or inner
function of the step) has no guards of its own closure: its free variables are that
run's variables, computed by the call or guarded where that function read them.
"""
import builtins
import dis
import functools
import gc
import os
import random
import sys
import sysconfig
import time
import types
import weakref

import numpy as np

from ..core import tape as _tape
from ..core.state import state
from ..core.tensor_base import TensorBase
from ..nn.modules.module import Module
from ..optim._scheduler import live_schedulers
from ..optim.optimizer import Optimizer, live_optimizers
from . import guards as _guards

_MISSING = object()
_print = builtins.print
_PLAIN = frozenset((int, float, bool, str, bytes, complex, type(None)))
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the tapegrad package
_LIBS = tuple({os.path.realpath(p) + os.sep for p in (
    sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("purelib"),
    sysconfig.get_paths().get("platlib")) if p}) + (_HERE + os.sep,)


def _user_file(f, cache={}):
    """True for a file the user wrote (not tapegrad's, the standard library's or an
    installed package's; `<stdin>`, notebooks and scripts are the user's)."""
    got = cache.get(f)
    if got is None:
        real = os.path.realpath(f) if not f.startswith("<") else f
        got = cache[f] = not (real.startswith(_LIBS) or f.startswith("<frozen"))
    return got


def _user_code(code):
    return _user_file(code.co_filename)


def _plain(v):
    t = type(v)
    if t in _PLAIN:
        return True
    return t is tuple and all(_plain(x) for x in v)


def _atom(v):
    """An item as a fingerprint sees it: a plain value as itself, anything else by
    identity (a tensor, a module, a nested object)."""
    t = type(v)
    if t in _PLAIN or (t is tuple and _plain(v)):
        return v
    return ("id", id(v))


def _item(x, depth):
    """An item of a container: a nested dict or list by its own items (`depth` levels
    more), anything else as `_atom`."""
    if depth > 0 and type(x) in (dict, list):
        return _fingerprint(x, depth - 1)
    return _atom(x)


def _fingerprint(v, depth=1):
    """What a compiled call may read THROUGH a value: a dict's or list's items, a user
    object's attributes (a config, an argparse Namespace, a dataclass), nested
    containers `depth` levels deeper; None when there is nothing such (a plain value,
    a tensor, a module: guarded otherwise; a function, a class, a Python module; the
    library's own objects, which change as their call steps run)."""
    t = type(v)
    if t is list or (t is tuple and not _plain(v)):
        return (t, tuple([_item(x, depth) for x in v]))
    if t is dict:
        d = v
    elif (isinstance(v, (Module, TensorBase)) or not hasattr(v, "__dict__")
          or isinstance(v, (type, types.ModuleType, types.FunctionType, types.MethodType,
                            types.BuiltinFunctionType, functools.partial))
          or not _user_class(t)):
        return None
    else:
        d = vars(v)
    return (t, tuple([(k, _item(x, depth)) for k, x in d.items()]))


def _user_class(t, cache={}):
    """A class the user wrote (a script's, a notebook's; dataclasses are) or the standard
    library's SimpleNamespace / argparse Namespace: not tapegrad's, NumPy's or an
    installed package's, whose objects change as the library runs."""
    got = cache.get(t)
    if got is None:
        mod = t.__module__
        f = getattr(sys.modules.get(mod), "__file__", None)
        got = cache[t] = (mod in ("types", "argparse") or (
            mod != "builtins" and (_user_file(f) if f is not None else mod == "__main__")))
    return got


def _groups(opt):
    """An optimizer's hyperparameters as its param groups hold them (the parameters by
    identity): what the step reads, which the user's code may set (`g['lr'] = lr`)."""
    return tuple(tuple((k, _atom(x) if k != "params" else tuple(map(id, x)))
                       for k, x in g.items()) for g in opt.param_groups)


def _rates(sched):
    """A scheduler's last rates (what `get_last_lr()` gives)."""
    return tuple(map(_atom, getattr(sched, "_last_lr", None) or ()))


def _epoch(sched):
    """A scheduler's epoch count (`last_epoch`, what `get_lr()` computes from)."""
    return getattr(sched, "last_epoch", None)


# attribute names whose reads in the call's own code make the library's optimizers'
# and schedulers' numbers guards: the rates (the param groups' hyperparameters and the
# schedulers' last rates), and the schedulers' epochs
_RATE_READS = frozenset(("param_groups", "get_last_lr", "_last_lr", "get_lr"))
_EPOCH_READS = frozenset(("last_epoch", "get_lr", "base_lrs", "_step_count"))


class Guards:
    """The Python values one capture read. `items`: (namespace dict or cell, name or
    None, value, plain); `modules`: (module, its guards.py key) of the modules among
    the values."""

    __slots__ = ("items", "where", "modules", "epoch", "fixed", "contents", "watched",
                 "library")

    def __init__(self):
        self.fixed = []  # the compiled function's default argument values (held as is)
        self.items = []
        self.where = []  # for messages: "global scale", "closure variable c"
        self.modules = []
        self.epoch = None  # core/tape.py's structure epoch when the module keys held
        # (index into items, fingerprint): the contents of the dicts, lists and user
        # objects among the values, checked at every replay (`cfg["lr"]`, `obj.scale`)
        self.contents = []
        # [value, how to read it, what it read, where] of every such value and every
        # optimizer: while capturing, what the call's own Python changes in them (the
        # replay would not repeat it) is found at each call step and at the end
        self.watched = []
        # (weak reference, how to read it, what it held when the call began, where): the
        # library's optimizers and schedulers, when the call's own code reads them (weak:
        # a capture must not keep an optimizer the program dropped, and its parameters)
        self.library = ()

    def add_fixed(self, value):
        """A default argument value of the compiled function: the same object on every
        call (not re-read); a module's state is guarded all the same."""
        self.fixed.append(value)
        self._module(value)

    def add(self, box, name, value, where):
        self.items.append((box, name, value, _plain(value)))
        self.where.append(where)
        self._module(value)
        fp = None if self.items[-1][3] else _fingerprint(value)
        if fp is not None:
            self.contents.append((len(self.items) - 1, fp))
            self.watched.append([value, _fingerprint, fp, f"the contents of {where}"])
        elif isinstance(value, Optimizer):
            self.watched.append([value, _groups, _groups(value),
                                 f"the param groups of {where}"])
        elif isinstance(value, (np.random.Generator, np.random.RandomState)):
            # (NumPy's methods run without a Python frame or a C-call event: a draw
            # shows as the generator's state moving)
            self.watched.append([value, _rng_state, _rng_state(value),
                                 f"the state of NumPy generator {where} (a draw)"])

    def changed(self):
        """While capturing: the first watched value the call's own Python changed since
        the capture began or the last call step (its description), or None."""
        for value, read, seen, where in self.watched:
            if read(value) != seen:
                return where
        return None

    def refresh(self):
        """After a call step (an optimizer's or a scheduler's step changes what they
        own): what the watched values hold now."""
        for w in self.watched:
            w[2] = w[1](w[0])

    def _module(self, value):
        if isinstance(value, Module) and all(m is not value for m, _ in self.modules):
            self.modules.append((value, _module_key(value)))
            self.epoch = _tape.epoch[0]
            self.module_contents(value)

    def module_contents(self, module):
        """Each submodule's public attributes that hold a dict, a list or a user object
        (`self.scales[0]`, `self.config.dropout`): guards by their contents (guards.py's
        key of a module has its plain attributes only, and changing a list's item moves
        no epoch); and those that hold a tensor, by identity."""
        for m in module.modules():  # (once, when capturing: torch's walk will do)
            d = m.__dict__
            for name, v in d.items():
                if name[0] != "_" and not _plain(v) and (
                        isinstance(v, TensorBase) or _fingerprint(v) is not None):
                    # (a tensor kept as a plain attribute, no parameter or buffer:
                    # `self.mask = tg.tril(...)`, guarded by identity, read by the call)
                    self.add(d, name, v, f"attribute {name} of {type(m).__name__}")

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
        for k, fp in self.contents:
            if _fingerprint(self.items[k][2]) != fp:
                return f"the contents of {self.where[k]}"
        for ref, read, seen, where in self.library:
            obj = ref()  # (gone: the call can no longer read it)
            if obj is not None and read(obj) != seen:
                return where
        if self.modules and self.epoch != _tape.epoch[0]:
            for m, key in self.modules:
                if _module_key(m) != key:
                    return f"the state of module {type(m).__name__}"
            self.epoch = _tape.epoch[0]  # nothing they show changed: skip until the next
        return None

    def tensors(self):
        """The tensors these guards hold: the values, the items of the dicts, lists and
        user objects among them (guarded by identity: `params["W"]`), the modules'
        parameters and buffers, the optimizers' parameters."""
        out = []
        for v in [item[2] for item in self.items] + self.fixed:
            if isinstance(v, TensorBase):
                out.append(v)
            groups = getattr(v, "param_groups", None)
            if type(groups) is list:
                for g in groups:
                    out.extend(g.get("params", ()))
        for k, _ in self.contents:
            v = self.items[k][2]
            inner = (v.values() if type(v) is dict else v if type(v) in (list, tuple)
                     else vars(v).values())
            out.extend(x for x in inner if isinstance(x, TensorBase))
        for m, _ in self.modules:
            _guards._module_part(m, [], out)
        return out


def _module_key(m):
    parts, ext = [], []
    if not _guards._module_part(m, parts, ext):
        return None  # (hooks: guards.py keeps such calls eager; here only a change counts)
    return tuple(parts)


_CLOCKS = frozenset(getattr(time, n) for n in (
    "time", "time_ns", "perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns",
    "process_time", "process_time_ns", "thread_time", "thread_time_ns")) | {os.urandom}


def _changing(fn):
    """The name of a C function whose value changes from call to call (Python's and
    NumPy's random numbers: a method of a random.Random, a NumPy RandomState or Generator,
    np.random.rand, random.random and what random.uniform/gauss/choice call; clocks,
    os.urandom), else None."""
    if fn in _CLOCKS:
        return f"{getattr(fn, '__module__', None) or 'os'}.{fn.__name__}"
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, random.Random):
        return f"random.{fn.__name__}"
    if isinstance(owner, (np.random.RandomState, np.random.Generator)):
        return f"numpy.random {type(owner).__name__}.{fn.__name__}"
    return None


def _rng_state(g):
    """A NumPy generator's state, comparable (its bit generator's, arrays as bytes)."""
    bg = g.bit_generator if isinstance(g, np.random.Generator) else g._bit_generator
    return repr(bg.state)


_NP_GLOBAL = np.random.mtrand._rand  # np.random.rand & co. draw from it


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
# a tensor's attributes whose stores the tape sees: `p.grad = None` (recorded as a step),
# `p.data += u` (the in-place write recorded; storing p's own array back changes
# nothing), `p.data = other` (a structural change: the capture breaks)
_TENSOR_ATTRS = frozenset(("grad", "data"))


def _side_effect(code, cache={}):
    """The first store in `code` a replay would not repeat (text), or None."""
    got = cache.get(code, 0)
    if got == 0:
        got = None
        for ins in dis.get_instructions(code):
            if ins.opname in ("STORE_ATTR", "DELETE_ATTR") and ins.argval in _TENSOR_ATTRS:
                continue  # (a tensor's: the tape records it, or the capture breaks)
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
        self.module = getattr(fn, "__self__", None)
        self.fn = getattr(fn, "__func__", fn)
        self.brk = brk
        self.guards = Guards()
        self.seen = set()
        self.reads_library = set()  # "rates", "epochs": what the call's code reads

    def __enter__(self):
        for v in (getattr(self.fn, "__defaults__", None) or ()) + tuple(
                (getattr(self.fn, "__kwdefaults__", None) or {}).values()):
            self.guards.add_fixed(v)
        if isinstance(self.module, Module):  # tg.compile(model): model.__call__
            self.guards.module_contents(self.module)
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
            elif event == "c_call" and brk is not None:
                if arg is _print:
                    if _user_code(frame.f_code):
                        brk("print() in the compiled call (a replay would not print)")
                elif (what := _changing(arg)) is not None and \
                        not frame.f_code.co_filename.startswith(_HERE):
                    brk(f"{what}() in the compiled call: a replay would use the "
                        f"captured call's value (the library's random ops draw anew)")
        self.np_state = _rng_state(_NP_GLOBAL)
        # the library's optimizers and schedulers as the call begins: guards if its
        # code reads them (`_frame`)
        rates = [(weakref.ref(o), _groups, _groups(o), f"the param groups of "
                  f"{type(o).__name__} (the call reads them)") for o in list(live_optimizers)]
        rates += [(weakref.ref(s), _rates, _rates(s), f"the rates of {type(s).__name__} "
                   "(the call reads them)") for s in list(live_schedulers)]
        epochs = [(weakref.ref(s), _epoch, _epoch(s), f"the epoch of {type(s).__name__} "
                   "(the call reads it)") for s in list(live_schedulers)]
        self.library = {"rates": rates, "epochs": epochs}
        sys.setprofile(profile)
        return self.guards

    def __exit__(self, *exc):
        if self.prev is None:
            sys.setprofile(None)
            self.guards.library = [g for kind in sorted(self.reads_library)
                                   for g in self.library[kind]]
            if self.brk is not None and _rng_state(_NP_GLOBAL) != self.np_state:
                self.brk("numpy.random's global generator drew in the compiled call (np."
                         "random.rand, ...): a replay would use the captured numbers")
        return False

    def _frame(self, frame, code):
        if not _RATE_READS.isdisjoint(code.co_names):
            self.reads_library.add("rates")
        if not _EPOCH_READS.isdisjoint(code.co_names):
            self.reads_library.add("epochs")
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
