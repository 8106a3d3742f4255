"""torch.nn.modules.module: `Module`, the base class of every layer and model (PyTorch's
`nn.Module`).

Assigning an attribute registers it, as in `torch/nn/modules/module.py`:
    self.w = Parameter(...)      -> self._parameters["w"]
    self.fc = Linear(3, 4)       -> self._modules["fc"]
    self.register_buffer("rm", t) -> self._buffers["rm"] (saved in state_dict when persistent)
Everything else (`parameters()`, `state_dict()`, `train()`, `zero_grad()`, the repr)
walks that tree. The walks use an explicit stack, not recursion.
"""
from collections import OrderedDict, namedtuple

import numpy as np

from ... import _device
from ...core import tape as _tape
from ...core.tensor_base import TensorBase
from ...dtypes import as_dtype as _as_dtype
from ..._tensor import Tensor
from ..parameter import Buffer, Parameter, is_lazy
from ...core.hooks import RemovableHandle
from ._devices_and_hooks import ModuleDevicesAndHooks

__all__ = ["Module"]

# torch's class name: load_state_dict(strict=False)'s result prints as
# `_IncompatibleKeys(missing_keys=[...], unexpected_keys=[...])`
class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


class Module(ModuleDevicesAndHooks):
    """Base class for layers and models. Subclasses define `forward`."""

    training: bool
    _version = 1

    def __init__(self, *args, **kwargs):
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got unexpected arguments "
                            "(Module.__init__ takes none)")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_hooks"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()

    def forward(self, *args, **kwargs):
        raise NotImplementedError(
            f'Module [{type(self).__name__}] is missing the required "forward" function')

    # ---- calling -------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not d.get("_forward_pre_hooks") and not d.get("_forward_hooks") and \
                "_call_extras" not in d:
            return self.forward(*args, **kwargs)
        for hook in list(d.get("_forward_pre_hooks", {}).values()):
            res = hook(self, args)
            if res is not None:
                args = res if isinstance(res, tuple) else (res,)
        # compile() and the backward hooks (_devices_and_hooks.py)
        forward = d.get("_compiled_call_impl") or self.forward
        if d.get("_backward_hooks") or d.get("_backward_pre_hooks"):
            out = self._call_with_backward_hooks(forward, args, kwargs)
        else:
            out = forward(*args, **kwargs)
        for hook in list(d.get("_forward_hooks", {}).values()):
            res = hook(self, args, out)
            if res is not None:
                out = res
        return out

    _call_impl = _wrapped_call_impl = __call__  # torch's names for the same call

    def register_forward_hook(self, hook):
        """`hook(module, args, output)` after each forward; may return a new output."""
        _tape.changed()  # tg.compile's guards: a structural change
        h = RemovableHandle(self._forward_hooks)
        self._forward_hooks[h.id] = hook
        return h

    def register_forward_pre_hook(self, hook):
        """`hook(module, args)` before each forward; may return new args."""
        _tape.changed()  # tg.compile's guards: a structural change
        h = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[h.id] = hook
        return h

    # ---- registration ----------------------------------------------------------------
    def __setattr__(self, name, value):
        _tape.changed()  # tg.compile's guards: a structural change
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._remove_from(name, d, "_buffers", "_modules")
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(tapegrad.nn.Parameter or None expected)")
            params[name] = None
            return
        if isinstance(value, Module):
            if d.get("_modules") is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._remove_from(name, d, "_parameters", "_buffers")
            d["_modules"][name] = value
            return
        modules = d.get("_modules")
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                "(tapegrad.nn.Module or None expected)")
            modules[name] = None
            return
        if isinstance(value, Buffer):
            self.register_buffer(name, value, persistent=value.persistent)
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(tapegrad.Tensor or None expected)")
            buffers[name] = value
            return
        object.__setattr__(self, name, value)

    def _remove_from(self, name, d, *dicts):
        d.pop(name, None)
        for k in dicts:
            store = d.get(k)
            if store is not None and name in store:
                del store[name]
                if k == "_buffers":
                    d["_non_persistent_buffers_set"].discard(name)

    def __getattr__(self, name):
        # Only called when normal lookup fails: look in the registries. Unrolled, the
        # parameters first: `self.weight` in a layer's forward is the hot case (every
        # layer call of every step), a loop over the three tables cost twice the opcodes.
        d = self.__dict__
        store = d.get("_parameters")
        if store is not None and name in store:
            return store[name]
        store = d.get("_buffers")
        if store is not None and name in store:
            return store[name]
        store = d.get("_modules")
        if store is not None and name in store:
            return store[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __delattr__(self, name):
        _tape.changed()  # tg.compile's guards: a structural change
        d = self.__dict__
        for k in ("_parameters", "_buffers", "_modules"):
            if name in d.get(k, ()):
                del d[k][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self):
        keys = list(super().__dir__())
        for k in ("_parameters", "_buffers", "_modules"):
            keys += list(self.__dict__.get(k, {}))
        return sorted(set(keys))

    def _check_name(self, name, kind):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if hasattr(self, name) and name not in self._parameters and name not in \
                self._buffers and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")

    def register_parameter(self, name, param):
        """Add a parameter (or None) under `name`."""
        _tape.changed()  # tg.compile's guards: a structural change
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name(name, "parameter")
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            "(tapegrad.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             "parameters must be created explicitly.")
        self._parameters[name] = param

    def register_buffer(self, name, tensor, persistent=True):
        """Add a buffer: state that is not learned (e.g. BatchNorm's running mean).
        Persistent buffers are part of `state_dict()`."""
        _tape.changed()  # tg.compile's guards: a structural change
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name(name, "buffer")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(tapegrad Tensor or None required)")
        if isinstance(tensor, Buffer):
            tensor = Tensor._of(tensor._data)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def add_module(self, name, module):
        """Add a child module under `name` (same as `setattr(self, name, module)`)."""
        _tape.changed()  # tg.compile's guards: a structural change
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        self._check_name(name, "module")
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        mod = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item) or not isinstance(getattr(mod, item), Module):
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = getattr(mod, item)
        return mod

    def get_parameter(self, target):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._parameters:
            raise AttributeError(f"{type(mod).__name__} has no parameter `{name}`")
        return mod._parameters[name]

    # ---- walking the tree ---------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(name, module) for this module and every descendant, depth first, pre-order."""
        if memo is None:
            memo = set()
        stack = [(prefix, self)]
        while stack:
            name, mod = stack.pop()
            if remove_duplicate:
                if id(mod) in memo:
                    continue
                memo.add(id(mod))
            yield name, mod
            kids = [(name + ("." if name else "") + k, m) for k, m in mod._modules.items()
                    if m is not None]
            stack.extend(reversed(kids))

    def modules(self):
        for _, m in self.named_modules():
            yield m

    def named_children(self):
        seen = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield name, m

    def children(self):
        for _, m in self.named_children():
            yield m

    def _named_members(self, attr, prefix="", recurse=True, remove_duplicate=True):
        seen = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mname, mod in mods:
            for k, v in getattr(mod, attr).items():
                if v is None or (remove_duplicate and id(v) in seen):
                    continue
                if remove_duplicate:
                    seen.add(id(v))
                yield mname + ("." if mname else "") + k, v

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(qualified name, Parameter), each shared parameter once."""
        return self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse=True):
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        return self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse=True):
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    # ---- modes and gradients ------------------------------------------------------------
    def train(self, mode=True):
        """Training mode (Dropout drops, BatchNorm uses batch statistics). Returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        if _tape.current() is not None:  # inside tg.compile's capture: a replayed call
            return _tape.call(Module.train, self, mode)
        _tape.changed()  # tg.compile's guards: a structural change
        for m in self.modules():
            m.__dict__["training"] = mode
        return self

    def eval(self):
        """Evaluation mode: same as `train(False)`."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset every parameter's gradient: to None (default) or to zeros in place."""
        if _tape.current() is not None:  # inside tg.compile's capture: a replayed call
            return _tape.call(Module.zero_grad, self, set_to_none)
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                if p.grad.grad_fn is not None:
                    p.grad = p.grad.detach()
                p.grad._data[...] = 0

    def apply(self, fn):
        """Call `fn(m)` on every submodule (children first, as PyTorch does), then self."""
        # NOTE: like PyTorch, a module shared by two parents is visited twice
        # (children() removes duplicates only among one module's own children).
        for m in _post_order(self, lambda m: reversed(list(m.children()))):
            fn(m)
        return self

    def to(self, *args, **kwargs):
        """Dtype conversion of floating parameters and buffers (`.to(tg.float64)`,
        `.double()`, `.float()`); devices other than cpu are not supported."""
        dtype = kwargs.get("dtype")
        if "device" in kwargs:
            _device.check(kwargs["device"], "Module.to()")
        for a in args:
            if isinstance(a, (str, _device.device)) and not _dtype_name(a):
                _device.check(a, "Module.to()")  # refuses cuda/mps by name
            elif isinstance(a, TensorBase):
                dtype = a._data.dtype  # to(tensor): its dtype (and its device, the CPU)
            elif a is not None and not isinstance(a, bool):  # bool: non_blocking
                dtype = a
        if dtype is None:
            return self
        from ... import dtypes as _dt
        dt = _dt.as_dtype(dtype)
        return self._apply_dtype(dt)

    def _apply_dtype(self, dt):
        _tape.changed()  # tg.compile's guards: a structural change
        for m in self.modules():
            for k, p in m._parameters.items():
                if is_lazy(p):  # a lazy module's placeholder: the dtype it will have
                    p._lazy_to(dt)
                elif p is not None and p._data.dtype.kind == "f" and p._data.dtype != dt:
                    p._data = p._data.astype(dt)
                    if p.grad is not None:
                        p.grad._data = p.grad._data.astype(dt)
            for k, b in m._buffers.items():
                if is_lazy(b):
                    b._lazy_to(dt)
                elif b is not None and b._data.dtype.kind == "f":
                    b._data = b._data.astype(dt)
        return self

    def double(self):
        return self._apply_dtype(np.dtype("float64"))

    def float(self):
        return self._apply_dtype(np.dtype("float32"))

    def half(self):
        return self._apply_dtype(np.dtype("float16"))

    def cpu(self):
        return self

    def share_memory(self):
        """Parameters and buffers move to shared memory (Tensor.share_memory_), so child
        processes given this module update the same weights (Hogwild). Returns self.
        As torch, gradients that already exist are shared too; ones made later are not."""
        for m in self.modules():
            for t in list(m._parameters.values()) + list(m._buffers.values()):
                if t is not None:
                    t.share_memory_()
                    if t.grad is not None:
                        t.grad.share_memory_()
        return self

    def type(self, dst_type):
        return self.to(dst_type)

    # ---- state ---------------------------------------------------------------------------
    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """Ordered dict `qualified name -> tensor` of parameters and persistent buffers.

        The tensors share memory with the module (detached unless `keep_vars`), as in
        PyTorch; copy them if you need a snapshot.
        """
        if args:  # old positional form state_dict(destination, prefix, keep_vars)
            destination = args[0]
            if len(args) > 1:
                prefix = args[1]
            if len(args) > 2:
                keep_vars = args[2]
        if destination is None:
            destination = OrderedDict()
        posts = []
        for mname, mod in self.named_modules(prefix=prefix.rstrip(".") if prefix else "",
                                             remove_duplicate=False):
            pre = mname + "." if mname else ""
            for hook in list(mod.__dict__.get("_state_dict_pre_hooks", {}).values()):
                hook(mod, pre, keep_vars)
            mod._save_to_state_dict(destination, pre, keep_vars)
            if mod.__dict__.get("_state_dict_hooks"):
                posts.append((mod, pre))
        for mod, pre in reversed(posts):  # a module's after its children's, as torch's
            for hook in list(mod._state_dict_hooks.values()):
                res = hook(mod, destination, pre, {})
                if res is not None:
                    destination = res
        return destination

    def get_extra_state(self):
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called.")

    def set_extra_state(self, state):
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called.")

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy tensors from `state_dict` into this module's parameters and buffers.

        Shapes must match exactly and values must be Tensors (or NumPy arrays) of
        numbers. With `strict=True` (default), missing or unexpected keys raise a
        RuntimeError listing them all; any error, in either mode, copies NOTHING; with
        `strict=False` the matching keys are loaded and
        `(missing_keys, unexpected_keys)` is returned. Values are cast to the
        destination's dtype and copied in place (parameters keep their identity, so an
        optimizer holding them stays valid), unless `assign=True`.
        """
        if not hasattr(state_dict, "items"):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        state_dict = self._run_load_overrides(state_dict, strict)
        own = {}
        extra_keys = {}
        for mname, mod in self.named_modules(remove_duplicate=False):
            pre = mname + "." if mname else ""
            for k, p in mod._parameters.items():
                if p is not None:
                    own[pre + k] = (mod, "_parameters", k, p)
            for k, b in mod._buffers.items():
                if b is not None and k not in mod._non_persistent_buffers_set:
                    own[pre + k] = (mod, "_buffers", k, b)
            if type(mod).set_extra_state is not Module.set_extra_state:
                extra_keys[pre + "_extra_state"] = mod
        missing = [k for k in own if k not in state_dict]
        missing += [k for k in extra_keys if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own and k not in extra_keys]
        errors = []
        if strict:  # PyTorch's order: missing, unexpected, then size mismatches
            if missing:
                errors.append("Missing key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in missing) + ". ")
            if unexpected:
                errors.append("Unexpected key(s) in state_dict: " +
                              ", ".join(f'"{k}"' for k in unexpected) + ". ")
        arrays = {}
        for k, (mod, kind, name, cur) in own.items():
            if k not in state_dict:
                continue
            v = state_dict[k]
            if is_lazy(v) or is_lazy(cur):  # a lazy module's placeholder (torch's rules)
                if is_lazy(v) and not is_lazy(cur):
                    v.size()  # raises torch's RuntimeError (no shape to compare)
                elif not is_lazy(v):
                    arrays[k] = v._data if isinstance(v, Tensor) else np.asarray(v)
                continue
            # A Tensor or a NumPy array of numbers, nothing else: np.asarray(None) or of
            # "abc" would pass the shape check of a 0-d buffer and fail mid-copy.
            arr = v._data if isinstance(v, Tensor) else np.asarray(v) if \
                isinstance(v, np.generic) else v
            if not isinstance(arr, np.ndarray) or arr.dtype.kind not in "biuf":
                what = type(v) if not isinstance(arr, np.ndarray) else f"dtype {arr.dtype}"
                errors.append(f'While copying the parameter named "{k}", expected '
                              "tapegrad.Tensor or Tensor-like object from checkpoint but "
                              f"received {what}")
                continue
            if tuple(arr.shape) != tuple(cur._data.shape):
                errors.append(f"size mismatch for {k}: copying a param with shape "
                              f"tapegrad.Size({list(arr.shape)}) from checkpoint, the shape "
                              f"in current model is tapegrad.Size({list(cur._data.shape)}).")
                continue
            arrays[k] = arr
        if errors:
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "\n\t".join(errors))
        # All checks passed: now copy (never half-load a model).
        for k, arr in arrays.items():
            mod, kind, name, cur = own[k]
            if is_lazy(cur):  # takes the checkpoint's shape, then its values
                cur.materialize(arr.shape)
            if assign:
                if kind == "_parameters":
                    mod._parameters[name] = Parameter(np.array(arr, copy=True),
                                                      requires_grad=cur.requires_grad)
                else:
                    mod._buffers[name] = Tensor._of(np.array(arr, copy=True))
            else:
                cur._data[...] = arr.astype(cur._data.dtype, copy=False)
        for k, mod in extra_keys.items():
            if k in state_dict:
                mod.set_extra_state(state_dict[k])
        result = _IncompatibleKeys(missing, unexpected)
        for mod in self.modules():
            for hook in list(mod.__dict__.get("_load_state_dict_post_hooks", {}).values()):
                hook(mod, result)
        if strict and (result.missing_keys or result.unexpected_keys) and (
                missing != result.missing_keys or unexpected != result.unexpected_keys):
            raise RuntimeError(f"Error(s) in loading state_dict for {type(self).__name__}:\n\t"
                               + "".join(f'Missing key(s) in state_dict: "{k}". '
                                         for k in result.missing_keys)
                               + "".join(f'Unexpected key(s) in state_dict: "{k}". '
                                         for k in result.unexpected_keys))
        return result

    def _run_load_overrides(self, state_dict, strict):
        """The load pre hooks and the subclasses' own `_load_from_state_dict`, each on a
        copy of `state_dict` they may change (renaming old keys is what they are for);
        then the loading below runs on that copy. Without either: the caller's dict."""
        base = ModuleDevicesAndHooks._load_from_state_dict
        mods = [(n, m) for n, m in self.named_modules(remove_duplicate=False)
                if m.__dict__.get("_load_state_dict_pre_hooks")
                or type(m)._load_from_state_dict is not base]
        if not mods:
            return state_dict
        state_dict = OrderedDict(state_dict)
        for name, mod in mods:
            pre = name + "." if name else ""
            errors = []
            if type(mod)._load_from_state_dict is not base:
                # its super() call runs the pre hooks, as torch's
                mod._load_from_state_dict(state_dict, pre, {}, strict, [], [], errors)
            else:
                mod._run_load_pre_hooks(state_dict, pre, strict, errors)
            if errors:
                raise RuntimeError(f"Error(s) in loading state_dict for "
                                   f"{type(self).__name__}:\n\t" + "\n\t".join(errors))
        return state_dict

    # ---- repr ------------------------------------------------------------------------------
    def extra_repr(self):
        """One line of this module's settings, shown inside its repr (override it)."""
        return ""

    def _get_name(self):
        return type(self).__name__

    def __repr__(self):
        # Built bottom-up with an explicit stack: the repr of a child is indented into
        # its parent's, as PyTorch prints it.
        post = _post_order(self, lambda m: (c for c in m._modules.values() if c is not None))
        text = {}
        for m in post:
            lines = []
            extra = m.extra_repr()
            if extra:
                lines = extra.split("\n")
            for key, c in m._modules.items():
                cr = text[id(c)] if c is not None else "None"
                cr = _addindent(cr, 2)
                lines.append(f"({key}): {cr}")
            s = m._get_name() + "("
            if lines:
                if len(lines) == 1 and not m._modules:
                    s += lines[0]
                else:
                    s += "\n  " + "\n  ".join(lines) + "\n"
            text[id(m)] = s + ")"
        return text[id(self)]

    def __getstate__(self):
        return self.__dict__.copy()

    def __setstate__(self, state):
        self.__dict__.update(state)


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    first = lines.pop(0)
    return first + "\n" + "\n".join(" " * n + line for line in lines)


def _typename(v):
    if isinstance(v, Tensor):
        return f"tapegrad.{type(v).__name__}"
    return type(v).__name__


def _post_order(root, kids):
    """Modules in post-order (each after all of its descendants), without recursion.
    `kids(m)` gives m's children in the order they should be pushed on the stack."""
    post = []
    stack = [(root, False)]
    while stack:
        m, done = stack.pop()
        if done:
            post.append(m)
            continue
        stack.append((m, True))
        for c in kids(m):
            stack.append((c, False))
    return post


def _dtype_name(a):
    """A string that names a dtype ('float64'), not a device."""
    if not isinstance(a, str):
        return False
    try:
        return _as_dtype(a) is not None
    except TypeError:
        return False
