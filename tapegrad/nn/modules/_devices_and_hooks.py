"""The rest of torch.nn.Module's methods, mixed into `Module` (module.py): device moves
(`cuda()`, `xpu()`, ... refused as Tensor.cuda() refuses them), `bfloat16()`,
`compile()`, `to_empty()`, `_apply()`, `get_buffer()` / `set_submodule()`, the full
backward hooks, the state-dict hooks and the per-module `_save_to_state_dict` /
`_load_from_state_dict` that subclasses override.

Backward hooks as torch's: the module's tensor inputs and outputs pass through an
identity autograd Function whose backward sees the gradients with respect to them.
`hook(module, grad_output)` (pre hook) runs when the outputs' gradients are known and may
replace them; `hook(module, grad_input, grad_output)` when the inputs' are, and may
replace those (None entries for inputs that need no gradient).
"""
import importlib
import warnings
from collections import OrderedDict
from typing import TypeVar

from ... import _device
from ...autograd.function import Function
from ...core.hooks import RemovableHandle
from ...dtypes import as_dtype as _as_dtype
from ..._tensor import Tensor

__all__ = ["ModuleDevicesAndHooks"]

T_destination = TypeVar("T_destination", bound=dict)


def _hooks(module, name):
    d = module.__dict__
    if name not in d:
        d[name] = OrderedDict()
    return d[name]


def _register(module, name, hook, prepend=False):
    if name in ("_backward_hooks", "_backward_pre_hooks"):
        module.__dict__["_call_extras"] = True  # Module.__call__ leaves its fast path
    table = _hooks(module, name)
    h = RemovableHandle(table)
    table[h.id] = hook
    if prepend:
        table.move_to_end(h.id, last=False)
    return h


class _BackwardHookIdentity(Function):
    """Identity on the tensors; its backward hands their gradients to `on_grads`, which
    may replace them."""

    @staticmethod
    def forward(ctx, on_grads, *tensors):
        ctx.on_grads = on_grads
        out = tuple(t.view_as(t) for t in tensors)
        return out if len(out) > 1 else out[0]

    @staticmethod
    def backward(ctx, *grads):
        return (None,) + tuple(ctx.on_grads(grads))


def _module_class(module):
    """nn.Module itself (the class just before this mixin in the MRO), found without
    importing module.py, which imports this file."""
    mro = type(module).__mro__
    return mro[mro.index(ModuleDevicesAndHooks) - 1]


def _device_refused(where, kind, device):
    if device is None or isinstance(device, int):
        device = _device.device(kind, device)
    _device.check(device, where)
    raise RuntimeError(f"{where}: invalid device '{device}', must be a {kind} device")


class ModuleDevicesAndHooks:
    """torch.nn.Module's methods beyond the core ones in module.py (see the docstring)."""

    T_destination = T_destination
    call_super_init = False
    dump_patches = False
    _compiled_call_impl = None     # set by compile()

    # ---- devices and dtypes ------------------------------------------------------------
    def cuda(self, device=None):
        """Refused with Tensor.cuda()'s error: tapegrad runs on the CPU only."""
        _device_refused("Module.cuda()", "cuda", device)

    def xpu(self, device=None):
        _device_refused("Module.xpu()", "xpu", device)

    def ipu(self, device=None):
        _device_refused("Module.ipu()", "ipu", device)

    def mtia(self, device=None):
        _device_refused("Module.mtia()", "mtia", device)

    def bfloat16(self):
        """Refused: NumPy, which tapegrad computes with, has no bfloat16 (the dtype's own
        error says what to use instead)."""
        _as_dtype("bfloat16")
        return self  # not reached

    def to_empty(self, *, device, recurse=True):
        """Parameters and buffers replaced by uninitialised ones of the same shape and
        dtype on `device` (the CPU), as torch's (for modules built on the meta device)."""
        _device.check(device, "Module.to_empty()")
        import numpy as np  # an array call kept to one line: torch.empty_like's
        return self._apply(lambda t: Tensor._of(np.empty_like(t._data)), recurse=recurse)

    def _apply(self, fn, recurse=True):
        """`fn(tensor) -> tensor` on every parameter, its grad and every buffer (of the
        whole tree unless recurse=False). A parameter keeps its identity: its data is
        replaced, so optimizers holding it stay valid (torch's default too)."""
        mods = self.modules() if recurse else [self]
        for m in mods:
            for k, p in m._parameters.items():
                if p is None:
                    continue
                p._data = fn(p)._data
                if p.grad is not None:
                    p.grad._data = fn(p.grad)._data
            for k, b in m._buffers.items():
                if b is not None:
                    m._buffers[k] = fn(b)
        return self

    def compile(self, *args, **kwargs):
        """Compile this module's forward in place (tg.compile's arguments), as torch's:
        calling the module runs the compiled forward; `forward` itself is unchanged."""
        # looked up when called: tg.compile sits above nn (it knows Modules), so a static
        # import here would be a cycle
        api = importlib.import_module("tapegrad._compile.api")
        self.__dict__["_compiled_call_impl"] = api.compile(self.forward, *args, **kwargs)
        self.__dict__["_call_extras"] = True

    # ---- the tree by name ----------------------------------------------------------------
    def get_buffer(self, target):
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if name not in mod._buffers:  # torch's two messages
            if not hasattr(mod, name):
                raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    def set_submodule(self, target, module, strict=False):
        """Put `module` at the dotted path `target` (its parent must exist). With
        strict=True the name must already be a submodule there."""
        if target == "":
            raise ValueError("Cannot set the submodule without a target name!")
        if not isinstance(module, ModuleDevicesAndHooks):  # every Module is one
            raise ValueError(f"`module` is not an nn.Module, found {type(module)}")
        parent_path, _, name = target.rpartition(".")
        parent = self.get_submodule(parent_path)
        if strict and not isinstance(parent._modules.get(name), ModuleDevicesAndHooks):
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if name in parent.__dict__ or name in parent._parameters or name in parent._buffers:
            if not isinstance(getattr(parent, name, None), ModuleDevicesAndHooks):
                raise AttributeError(f"`{name}` is not an nn.Module")
        parent.add_module(name, module)

    # ---- backward hooks ------------------------------------------------------------------
    def register_full_backward_hook(self, hook, prepend=False):
        """`hook(module, grad_input, grad_output)` once the gradients with respect to the
        module's tensor inputs are computed; it may return a new grad_input."""
        return _register(self, "_backward_hooks", hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """`hook(module, grad_output)` once the gradients with respect to the module's
        outputs are computed; it may return a new grad_output."""
        return _register(self, "_backward_pre_hooks", hook, prepend)

    def register_backward_hook(self, hook):
        """torch's older backward hook. tapegrad runs it as a full backward hook: the
        gradients with respect to the module's own inputs and outputs (what torch's
        gives for single-op modules, and what its deprecation points to)."""
        return _register(self, "_backward_hooks", hook)

    def _get_backward_hooks(self):
        return (list(self.__dict__.get("_backward_hooks", {}).values()),
                list(self.__dict__.get("_backward_hooks", {}).values()))

    def _get_backward_pre_hooks(self):
        return list(self.__dict__.get("_backward_pre_hooks", {}).values())

    def _call_with_backward_hooks(self, call, args, kwargs):
        """Run `call(*args, **kwargs)` with the module's backward hooks attached."""
        pre = list(self.__dict__.get("_backward_pre_hooks", {}).values())
        post = list(self.__dict__.get("_backward_hooks", {}).values())
        slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        wanted = [i for i in slots if args[i].requires_grad]
        state = {"grad_output": None}

        def on_output_grads(grads):
            for hook in pre:
                res = hook(self, grads)
                if res is not None:
                    grads = res if isinstance(res, tuple) else (res,)
            state["grad_output"] = grads
            if not wanted:  # no input needs a gradient: the full hooks run now (torch warns)
                warnings.warn("Full backward hook is firing when gradients are computed with "
                              "respect to module outputs since no inputs require gradients. "
                              "See https://docs.pytorch.org/docs/main/generated/torch.nn."
                              "Module.html#torch.nn.Module.register_full_backward_hook for "
                              "more details.", stacklevel=2)
                for hook in post:
                    hook(self, (None,) * len(slots), grads)
            return grads

        def on_input_grads(grads):
            by_slot = dict(zip(wanted, grads))
            grad_input = tuple(by_slot.get(i) for i in slots)
            for hook in post:
                res = hook(self, grad_input, state["grad_output"])
                if res is not None:
                    grad_input = res if isinstance(res, tuple) else (res,)
                    if len(grad_input) != len(slots):
                        raise RuntimeError(f"Backward hook returned an invalid number of "
                                           f"grad_input, got {len(grad_input)}, but "
                                           f"expected {len(slots)}")
            return tuple(grad_input[slots.index(i)] for i in wanted)

        if wanted and post:
            args = list(args)
            moved = _BackwardHookIdentity.apply(on_input_grads, *[args[i] for i in wanted])
            for i, t in zip(wanted, moved if isinstance(moved, tuple) else (moved,)):
                args[i] = t
        out = call(*args, **kwargs)
        outs = out if isinstance(out, tuple) else (out,)
        if all(isinstance(o, Tensor) for o in outs) and any(o.requires_grad for o in outs):
            moved = _BackwardHookIdentity.apply(on_output_grads, *outs)
            moved = moved if isinstance(moved, tuple) else (moved,)
            out = type(out)(moved) if isinstance(out, tuple) else moved[0]
        return out

    # ---- state-dict hooks ------------------------------------------------------------------
    def register_state_dict_pre_hook(self, hook):
        """`hook(module, prefix, keep_vars)` before state_dict() saves this module."""
        return _register(self, "_state_dict_pre_hooks", hook)

    def register_state_dict_post_hook(self, hook):
        """`hook(module, state_dict, prefix, local_metadata)` after state_dict() saved this
        module and its children; it may change state_dict in place."""
        return _register(self, "_state_dict_hooks", hook)

    def _register_state_dict_hook(self, hook):
        """torch's older post hook; it may return a new state dict."""
        return _register(self, "_state_dict_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook):
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` before load_state_dict() loads this module; it may
        change state_dict (a copy of the caller's) in place."""
        return _register(self, "_load_state_dict_pre_hooks",
                         lambda *a, h=hook: h(self, *a))

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        return _register(self, "_load_state_dict_pre_hooks",
                         (lambda *a, h=hook: h(self, *a)) if with_module else hook)

    def register_load_state_dict_post_hook(self, hook):
        """`hook(module, incompatible_keys)` after load_state_dict(); it may change the
        missing/unexpected key lists in place (strict mode then reports what is left)."""
        return _register(self, "_load_state_dict_post_hooks", hook)

    # ---- per-module saving and loading (what subclasses override) ------------------------
    def _save_to_state_dict(self, destination, prefix, keep_vars):
        """This module's own parameters and persistent buffers (not its children's) into
        `destination` under `prefix`."""
        for k, p in self._parameters.items():
            if p is not None:
                destination[prefix + k] = p if keep_vars else p.detach()
        for k, b in self._buffers.items():
            if b is not None and k not in self._non_persistent_buffers_set:
                destination[prefix + k] = b if keep_vars else b.detach()
        if type(self).get_extra_state is not _module_class(self).get_extra_state:
            destination[prefix + "_extra_state"] = self.get_extra_state()

    def _run_load_pre_hooks(self, state_dict, prefix, strict, error_msgs, missing_keys=None,
                            unexpected_keys=None):
        for hook in list(self.__dict__.get("_load_state_dict_pre_hooks", {}).values()):
            hook(state_dict, prefix, {}, strict,
                 [] if missing_keys is None else missing_keys,
                 [] if unexpected_keys is None else unexpected_keys, error_msgs)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        """Copy this module's own parameters and buffers from `state_dict` (keys under
        `prefix`), in place; record missing keys, size mismatches (error_msgs) and, with
        strict, the unexpected keys under `prefix` that no child owns. The load pre
        hooks run first, as in torch."""
        self._run_load_pre_hooks(state_dict, prefix, strict, error_msgs, missing_keys,
                                 unexpected_keys)
        own = {k: v for k, v in list(self._parameters.items()) + list(
            (k, b) for k, b in self._buffers.items()
            if k not in self._non_persistent_buffers_set) if v is not None}
        for name, cur in own.items():
            key = prefix + name
            if key not in state_dict:
                missing_keys.append(key)
                continue
            v = state_dict[key]
            arr = v._data if isinstance(v, Tensor) else v
            if tuple(getattr(arr, "shape", ())) != tuple(cur._data.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"tapegrad.Size({list(getattr(arr, 'shape', ()))}) from "
                                  "checkpoint, the shape in current model is "
                                  f"tapegrad.Size({list(cur._data.shape)}).")
                continue
            cur._data[...] = arr
        extra = prefix + "_extra_state"
        if type(self).set_extra_state is not _module_class(self).set_extra_state:
            if extra in state_dict:
                self.set_extra_state(state_dict[extra])
            elif strict:
                missing_keys.append(extra)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra:
                    first = key[len(prefix):].split(".")[0]
                    if first not in own and first not in self._modules:
                        unexpected_keys.append(key)
