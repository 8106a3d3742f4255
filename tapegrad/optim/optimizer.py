"""Optimizer base class: parameter groups, per-parameter state, zero_grad, state dicts.

Shape of the design (PyTorch's `torch/optim/optimizer.py` and `sgd.py`):
- `param_groups` is a list of dicts; each holds `'params'` (a list of tensors) and that
  group's hyper-parameters (missing ones are filled from `defaults`).
- `state` maps a parameter tensor to a dict of its buffers (momentum, moments, step).
- A subclass's `step()` validates and gathers lists of arrays per group, then calls a
  plain function (`sgd`, `adam`, `rmsprop`) that does the math on NumPy arrays and
  updates each `p.data` IN PLACE (so views and anyone holding the array see the new
  values), bumping the parameter's version counter as an in-place op would.

`state_dict()` has PyTorch's structure: `{'state': {index: {...}}, 'param_groups':
[{'params': [index, ...], 'lr': ..., ...}]}` where parameters are numbered in order of
appearance across groups; buffers are Tensors, so `tg.save` can write it.
"""
import warnings
import weakref

import numpy as np

from ..autograd.why_no_grad import warn_on_first_step
from ..core import tape as _tape
from ..core.grad_mode import enable_grad, recording_off
from .._tensor import Tensor
from ._arrays import scalar_dtype

__all__ = ["Optimizer", "required"]


class _RequiredParameter:
    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


# every optimizer alive (tg.compile guards what a compiled call reads of their param
# groups: `_compile/python_guards.py`)
live_optimizers = weakref.WeakSet()


class Optimizer:
    """Base class of all optimizers. Subclasses implement `step(closure=None)`."""

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        live_optimizers.add(self)
        return self

    def __init__(self, params, defaults):
        self.defaults = defaults
        self.state = {}
        self.param_groups = []
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {type(params).__name__}")
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for group in param_groups:
            self.add_param_group(group)

    def __repr__(self):
        lines = [self.__class__.__name__ + " ("]
        for i, group in enumerate(self.param_groups):
            lines.append(f"Parameter Group {i}")
            for key in sorted(group):
                if key != "params":
                    lines.append(f"    {key}: {group[key]}")
        lines.append(")")
        return "\n".join(lines)

    def add_param_group(self, param_group):
        """Add a group of parameters with its own hyper-parameters (e.g. to train a
        frozen layer later with a smaller lr)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group).__name__}")
        param_group = dict(param_group)
        params = param_group["params"]
        if isinstance(params, Tensor):
            params = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            params = list(params)
        names = [p[0] for p in params if isinstance(p, tuple)]
        params = [p[1] if isinstance(p, tuple) else p for p in params]
        if names:
            if len(names) != len(params):
                raise ValueError("all optimizer params should be with/without names. Some "
                                 "param names are missing")
            param_group["param_names"] = names
        for p in params:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params "
                                f"is {type(p).__name__}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        param_group["params"] = params
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len({id(p) for p in params}) != len(params):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error", stacklevel=3)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        if any(id(p) in seen for p in params):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none=True):
        """Reset gradients: drop them (`set_to_none=True`, the default, saves memory and
        lets step() skip parameters that got no gradient) or fill them with zeros."""
        if _tape.current() is not None:  # inside tg.compile's capture: a replayed call
            return _tape.call(Optimizer.zero_grad, self, set_to_none)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad = p.grad.detach() if p.grad.grad_fn is not None else p.grad
                    p.grad._data[...] = 0
                    p.grad._version_counter[0] += 1

    def step(self, closure=None):
        raise NotImplementedError

    # ---- the step scaffold every built-in optimizer shares ---------------------------
    # torch's shape: `step` gathers each group's parameters that have a gradient, makes
    # their state at the first step (`_init_group`), then one plain function updates the
    # arrays. A subclass's `step` is `return self._step(closure)` under @_no_grad_step;
    # it supplies `_init_state` (a fresh state dict) and `_update` (the array function's
    # call), and may supply `_update_fast` (a path that gives the same bits faster).
    def _step(self, closure):
        """One update of every parameter that has a gradient; returns closure()'s loss."""
        loss = self._closure_loss(closure)
        for gi, group in enumerate(self.param_groups):
            params = [p for p in group["params"] if p.grad is not None]
            if not self._update_fast(gi, group, params):
                self._update(group, params, self._group_states(group, params))
            self._bump(params)
        return loss

    def _group_states(self, group, params):
        """Each parameter's state dict, made by `_init_state` the first time it steps."""
        states = []
        for p in params:
            st = self.state.get(p)
            if not st:
                st = self.state[p] = self._init_state(p, group)
            states.append(st)
        return states

    def _init_state(self, p, group):
        raise NotImplementedError

    def _update(self, group, params, states):
        raise NotImplementedError

    def _update_fast(self, gi, group, params):
        """Update group `gi` on a faster path and return True, or return False."""
        return False

    @staticmethod
    def _new_step(fused=False):
        """A fresh `step` counter: a 0-d tensor of torch's dtype (`_get_scalar_dtype`):
        float32 for fused, else float64 under a float64 default dtype, else float32."""
        return Tensor._of(np.zeros((), np.float32 if fused else scalar_dtype()))

    # ---- helpers for subclasses ------------------------------------------------------
    @staticmethod
    def _closure_loss(closure):
        if closure is None:
            return None
        with enable_grad():
            return closure()

    @staticmethod
    def _check_adam_args(lr, eps, betas, weight_decay):
        """The checks (and messages) torch's Adam-family constructors share."""
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")

    @staticmethod
    def _bump(params):
        """The update changed these parameters in place: bump their version counters, so a
        graph that saved the old values refuses to backprop through them."""
        for p in params:
            p._version_counter[0] += 1

    # ---- state dicts -----------------------------------------------------------------
    def state_dict(self):
        """`{'state': {param index: {name: Tensor | number}}, 'param_groups': [...]}`.

        Parameters are numbered 0, 1, ... in order across groups; the returned tensors
        share memory with the live state (as in PyTorch); copy before mutating."""
        index = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {}
        for p, s in self.state.items():
            if isinstance(p, Tensor) and id(p) in index:
                state[index[id(p)]] = dict(s)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore state from `state_dict()` output. Groups must match in number and size;
        buffers are copied and cast to their parameter's dtype (except `step`)."""
        state_dict = _copy_state(state_dict)
        groups = self.param_groups
        saved_groups = state_dict["param_groups"]
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = {}
        for g, s in zip(groups, saved_groups):
            for old_id, p in zip(s["params"], g["params"]):
                id_map[old_id] = p
        state = {}
        for k, v in state_dict["state"].items():
            key = int(k) if isinstance(k, str) and k.lstrip("-").isdigit() else k
            if key in id_map:
                p = id_map[key]
                state[p] = {name: _cast_state(name, val, p) for name, val in v.items()}
            else:
                state[k] = v
        new_groups = []
        for g, s in zip(groups, saved_groups):
            s = dict(s)
            s["params"] = g["params"]
            if "param_names" in g and "param_names" not in s:
                s["param_names"] = g["param_names"]
            new_groups.append(s)
        self.state = state
        self.param_groups = new_groups


def _copy_state(sd):
    # A deep copy that does not rely on Tensor supporting copy.deepcopy: the loaded
    # buffers must not alias the caller's state dict.
    def cp(v):
        if isinstance(v, Tensor):
            return Tensor._of(v._data.copy())
        if isinstance(v, dict):
            return {k: cp(x) for k, x in v.items()}
        if isinstance(v, list):
            return [cp(x) for x in v]
        if isinstance(v, tuple):
            return tuple(cp(x) for x in v)
        return v
    return {"state": cp(sd["state"]), "param_groups": cp(sd["param_groups"])}


def _cast_state(name, value, param):
    if isinstance(value, np.ndarray):
        value = Tensor._of(value)
    if isinstance(value, Tensor) and name != "step" and value._data.dtype.kind == "f":
        if value._data.dtype != param._data.dtype:
            value = Tensor._of(value._data.astype(param._data.dtype))
    return value


def _no_grad_step(step):
    """Decorator: run an optimizer's `step` under no_grad (the closure re-enables grad).

    It also records that step() was called (`_opt_called`, torch's name), so a scheduler
    stepped before its optimizer can warn as torch's does; the mark on the wrapper tells
    the scheduler this optimizer's calls are being recorded (a user subclass whose step
    is not decorated is never warned about). After the FIRST step it warns once about
    parameters that require grad but got no gradient (autograd/why_no_grad.py); later
    steps pay one dict lookup for that."""
    import functools

    @functools.wraps(step)
    def wrapper(self, *args, **kwargs):
        if _tape.current() is not None:  # inside tg.compile's capture: a replayed call
            return _tape.call(wrapper, self, *args, **kwargs)
        self._opt_called = True
        with recording_off():
            out = step(self, *args, **kwargs)
        if "_none_grads_checked" not in self.__dict__:
            self._none_grads_checked = True
            warn_on_first_step(self)
        return out

    wrapper._records_calls = True
    return wrapper
