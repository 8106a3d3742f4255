"""Class instances in a checkpoint: dataclass instances, argparse.Namespace and whole
nn.Module objects (`torch.save(model, PATH)`).

Programs save their config with the weights (build-nanogpt's `{'config': GPTConfig(...)}`,
`{'args': args}`). The tree records such an object as its class's module and qualname
and its attributes (`tree` holds the node), never code:

    {"t": "dataclass"|"namespace"|"module", "module": "__main__", "name": "GPTConfig",
     "items": [["block_size", NODE], ...]}

A Module's items are its `__dict__` as pickle sees it: `training`, the `_parameters` /
`_buffers` / `_modules` dicts (Parameters are tensor nodes marked "p", submodules are
module nodes) and the plain attributes it holds (ints, floats, strings, tuples,
dtypes...). A module holding anything else (a function as its activation, a
registered hook) is refused by `save`: a tapegrad file names classes, and functions
only of tapegrad.nn.functional (a layer's `activation = F.relu`), which `load` finds
there by name and never calls.

Loading follows torch 2.13's `weights_only`:
- True (the default): the class must be allow-listed with `add_safe_globals` /
  `safe_globals`, under the "module.qualname" it was saved as, as torch matches a
  pickle's GLOBAL; argparse.Namespace is not on torch's default list, so not here either.
  Nothing is imported: the class is the object the program listed.
- False: the module is imported and the qualname looked up, as pickle's find_class does,
  but only for the kinds above, and the result must still be a dataclass / a
  Namespace class / an nn.Module subclass; nothing else named in the file is ever
  called. (torch's weights_only=True refuses a whole module unless every class in it
  is allow-listed; so does `load`.)

Either way the object is rebuilt as pickle and torch's unpickler rebuild it:
`cls.__new__(cls)`, then the saved attributes go into its `__dict__` (fields of a
`slots=True` dataclass are set through their slots). `__init__` and `__post_init__`
do not run: a `__post_init__` that derives or converts a field would run a second time
on already-converted values, and `init=False` fields could not be passed to `cls(...)`
at all. So a loaded object is the saved one, attribute for attribute, as with torch.
"""
import argparse
import dataclasses
import importlib
import pickle
import sys

from .errors import TreeError

KINDS = frozenset({"dataclass", "namespace", "module", "function"})
_WHAT = {"dataclass": "a dataclass instance", "namespace": "an argparse.Namespace",
         "module": "an nn.Module", "function": "a function"}
_CLASS = {"dataclass": "a dataclass", "namespace": "argparse.Namespace or a subclass",
          "module": "an nn.Module subclass",
          "function": "a function of tapegrad.nn.functional"}
# The one namespace whose functions a module may hold (TransformerEncoderLayer's
# `activation = F.relu`): saved by name, found again only there, never called on load.
_FUNCTIONS = "tapegrad.nn.functional"


def _functional():
    from ..nn import functional
    return functional


def _is_functional(obj):
    name = getattr(obj, "__name__", None)
    return callable(obj) and not isinstance(obj, type) and type(name) is str and \
        getattr(_functional(), name, None) is obj
# The dicts every Module's __dict__ holds, and what their values must be on load.
_MODULE_DICTS = ("_parameters", "_buffers", "_modules")


def _module_class():
    # nn sits above serialization's callers but does not import it: imported here, when
    # a module is saved or loaded, to keep `_serial` importable without nn.
    from ..nn.modules.module import Module
    return Module


def is_parameter(value):
    """Whether a tensor is an nn.Parameter (saved so, and loaded back as one)."""
    from ..nn.parameter import Parameter
    return isinstance(value, Parameter)


def make_parameter(arr, requires_grad):
    from ..nn.parameter import Parameter
    return Parameter(arr, requires_grad=requires_grad)


def _lookup(module, qualname):
    """The object `qualname` names inside `module`, or None."""
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def describe(obj, where):
    """(kind, module, qualname, {attribute: value}) for a dataclass instance, a
    Namespace or an nn.Module, None for anything else. Refuses (TypeError) a class that
    could not be found again by its name, as pickle does: a class defined inside a
    function, or one shadowed in its module; and a module with hooks registered."""
    if _is_functional(obj):
        return "function", _FUNCTIONS, obj.__name__, {}
    if isinstance(obj, argparse.Namespace):
        kind = "namespace"
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        kind = "dataclass"
    elif isinstance(obj, _module_class()):
        kind = "module"
    else:
        return None
    cls = type(obj)
    module, qualname = cls.__module__, cls.__qualname__
    if _lookup(sys.modules.get(module), qualname) is not cls:
        raise TypeError(f"tg.save: cannot save the {cls.__name__} object at {where}: its "
                        f"class {module}.{qualname} cannot be found again by that name "
                        "(defined inside a function?); define the class at the top level "
                        "of a module, as torch.save (pickle) requires too")
    if hasattr(obj, "__dict__"):
        attrs = dict(vars(obj))  # what pickle saves, so what torch.load gives back
    else:  # a dataclass(slots=True)
        attrs = {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj)}
    if kind == "module":
        for k, v in attrs.items():
            # torch pickles hooks by reference; a tapegrad file holds no functions.
            if k.endswith("hooks") and isinstance(v, dict) and v:
                raise TypeError(f"tg.save: cannot save the {cls.__name__} module at "
                                f"{where}: it has {k.lstrip('_')} registered (functions "
                                "are not saved); remove them first, or save its "
                                "state_dict()")
    for k in attrs:
        if type(k) is not str:
            raise TypeError(f"tg.save: the {cls.__name__} object at {where} has a "
                            f"non-string attribute name {k!r}")
    return kind, module, qualname, attrs


def check_name(module, qualname, where):
    """Refuse (TreeError) a class name that no writer could have recorded."""
    if type(module) is not str or type(qualname) is not str or not all(
            p.isidentifier() for p in module.split(".") + qualname.split(".")):
        raise TreeError(f"{where}: class name {str(module)[:60]!r}, "
                        f"{str(qualname)[:60]!r} is not a module and qualname")


def _allowed(safe_globals):
    """The allow-list by "module.qualname", built as torch builds it from
    `_marked_safe_globals_set` (same checks of `(obj, "name")` pairs)."""
    out = {}
    for g in safe_globals:
        if isinstance(g, tuple):
            if len(g) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(g)}")
            if type(g[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(g[1])}")
            out[g[1]] = g[0]
        else:
            out[f"{g.__module__}.{g.__qualname__}"] = g
    return out


def _is_kind(cls, kind):
    if kind == "function":
        return _is_functional(cls)
    if not isinstance(cls, type):
        return False
    if kind == "namespace":
        return issubclass(cls, argparse.Namespace)
    if kind == "module":
        return issubclass(cls, _module_class())
    return dataclasses.is_dataclass(cls)


def find_class(kind, module, qualname, *, weights_only, safe_globals, file):
    """The class to rebuild a `kind` object of class module.qualname with. `file` is
    the file's name for messages."""
    full = f"{module}.{qualname}"
    if kind == "function" and module != _FUNCTIONS:
        raise TypeError(f"tg.load: {file} names the function {full}: only functions of "
                        f"{_FUNCTIONS} are rebuilt")
    if weights_only:
        cls = _allowed(safe_globals).get(full)
        if kind == "function" and cls is None:  # listed as F.relu, found by identity
            found = getattr(_functional(), qualname, None)
            cls = found if found is not None and any(
                g is found for g in safe_globals) else None
        if cls is None:
            # torch's wording (UnpicklingError "Weights only load failed. ... Unsupported
            # global: GLOBAL X was not an allowed global by default. Please use ..."),
            # with our module's name and what weights_only=False does here.
            raise pickle.UnpicklingError(
                f"tg.load: Weights only load failed for {file}. Unsupported global: GLOBAL {full} "
                f"({_WHAT[kind]}) was not an allowed global by default. Please use "
                f"`tapegrad.serialization.add_safe_globals([{full}])` or the "
                f"`tapegrad.serialization.safe_globals([{full}])` context manager to "
                "allowlist this class if you trust it, or load with `weights_only=False` "
                f"if you trust the file (that imports {module} to find the class).")
    else:
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as e:
            raise ModuleNotFoundError(
                f"tg.load: {file} holds {_WHAT[kind]} of class {full}, but its module "
                f"cannot be imported ({e})", name=e.name) from None
        cls = _lookup(mod, qualname)
        if cls is None:
            raise AttributeError(f"tg.load: {file} holds {_WHAT[kind]} of class {full}, "
                                 f"which module {module} no longer defines")
    if not _is_kind(cls, kind):
        raise TypeError(f"tg.load: {file} holds {_WHAT[kind]} of class {full}, but "
                        f"{full} is now {cls!r}, not {_CLASS[kind]}: not rebuilt")
    return cls


def build(cls, attrs, file):
    """The instance of `cls` with attributes `attrs` (see the module docstring for why
    neither `__init__` nor `__post_init__` runs)."""
    if not isinstance(cls, type):  # a function of nn.functional: itself, no state
        if attrs:
            raise TypeError(f"tg.load: {file}: the function {cls.__name__} has attributes")
        return cls
    if issubclass(cls, _module_class()):
        _check_module_attrs(cls, attrs, file)
    obj = cls.__new__(cls)
    if hasattr(obj, "__dict__"):
        obj.__dict__.update(attrs)
        return obj
    names = {f.name for f in dataclasses.fields(cls)}
    for k, v in attrs.items():
        if k not in names:
            raise TypeError(f"tg.load: {file}: class {cls.__module__}.{cls.__qualname__} "
                            f"has no field {k!r} (it changed since the file was written)")
        object.__setattr__(obj, k, v)  # through the slot, past a frozen __setattr__
    return obj


def _check_module_attrs(cls, attrs, file):
    """Refuse a module whose parameter/buffer/submodule tables are not what a Module
    holds (a damaged or crafted file): it would fail later, far from the file."""
    from .._tensor import Tensor
    Module = _module_class()
    want = {"_parameters": (lambda v: v is None or is_parameter(v), "Parameters"),
            "_buffers": (lambda v: v is None or isinstance(v, Tensor), "tensors"),
            "_modules": (lambda v: v is None or isinstance(v, Module), "modules")}
    for key in _MODULE_DICTS:
        ok, what = want[key]
        table = attrs.get(key)
        if not isinstance(table, dict) or not all(
                type(k) is str and ok(v) for k, v in table.items()):
            raise TypeError(f"tg.load: {file}: the {cls.__module__}.{cls.__qualname__} "
                            f"module's {key} is not a dict of {what}: not rebuilt")
