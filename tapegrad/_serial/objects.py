"""Class instances in a checkpoint: dataclass instances and argparse.Namespace.

Programs save their config with the weights (build-nanogpt's `{'config': GPTConfig(...)}`,
`{'args': args}`). The tree records such an object as its class's module and qualname
and its attributes (`tree` holds the node), never code:

    {"t": "dataclass"|"namespace", "module": "__main__", "name": "GPTConfig",
     "items": [["block_size", NODE], ...]}

Loading follows torch 2.13's `weights_only`:
- True (the default): the class must be allow-listed with `add_safe_globals` /
  `safe_globals`, under the "module.qualname" it was saved as, as torch matches a
  pickle's GLOBAL; argparse.Namespace is not on torch's default list, so not here either.
  Nothing is imported: the class is the object the program listed.
- False: the module is imported and the qualname looked up, as pickle's find_class does,
  but only for the two kinds above, and the result must still be a dataclass / a
  Namespace class; nothing else named in the file is ever called.

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

KINDS = frozenset({"dataclass", "namespace"})
_WHAT = {"dataclass": "a dataclass instance", "namespace": "an argparse.Namespace"}
_CLASS = {"dataclass": "a dataclass", "namespace": "argparse.Namespace or a subclass"}


def _lookup(module, qualname):
    """The object `qualname` names inside `module`, or None."""
    obj = module
    for part in qualname.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def describe(obj, where):
    """(kind, module, qualname, {attribute: value}) for a dataclass instance or a
    Namespace, None for anything else. Refuses (TypeError) a class that could not be
    found again by its name, as pickle does: a class defined inside a function, or
    one shadowed in its module."""
    if isinstance(obj, argparse.Namespace):
        kind = "namespace"
    elif dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        kind = "dataclass"
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
    if not isinstance(cls, type):
        return False
    if kind == "namespace":
        return issubclass(cls, argparse.Namespace)
    return dataclasses.is_dataclass(cls)


def find_class(kind, module, qualname, *, weights_only, safe_globals, file):
    """The class to rebuild a `kind` object of class module.qualname with. `file` is
    the file's name for messages."""
    full = f"{module}.{qualname}"
    if weights_only:
        cls = _allowed(safe_globals).get(full)
        if cls is None:
            # torch's wording (UnpicklingError "Weights only load failed. ... Unsupported
            # global: GLOBAL X was not an allowed global by default. Please use ..."),
            # with our module's name and what weights_only=False does here.
            raise pickle.UnpicklingError(
                f"tg.load: Weights only load failed for {file}. Unsupported global: {full} "
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
