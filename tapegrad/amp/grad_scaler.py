"""GradScaler: dynamic loss scaling, a line-by-line match of `torch.amp.GradScaler`.

Why. float16 has 10 mantissa bits and its smallest positive value is 2**-24 ~ 6e-8:
a gradient of 1e-8 becomes exactly 0 in float16 ("flushes to zero") and its weight
stops learning. Multiplying the loss by S multiplies every gradient of the backward
pass by S (backward is linear in the seed), lifting small gradients into float16's
range; dividing the float32 master gradients by S afterwards restores their values.

The scale S is adapted:
  * a step whose gradients contain inf/nan (S too large: overflow) is SKIPPED and
    S *= backoff_factor (0.5);
  * after `growth_interval` (2000) consecutive good steps, S *= growth_factor (2).
The scale is kept in float32 and updated in float32, as PyTorch does, so the
sequence of scales is the same number for number.

Per optimizer, a step goes READY -> UNSCALED (`unscale_`, optional, e.g. before
clipping) -> STEPPED (`step`); `update()` resets every optimizer to READY. As in
PyTorch, float16 gradients cannot be unscaled (they would lose the very digits the
scaling saved): the optimizer's parameters must be float32 masters.
"""
import enum
import functools
import math

import numpy as np

from ..core import tape as _tape
from ..core.tensor_base import TensorBase, like

__all__ = ["GradScaler", "OptState"]


class OptState(enum.Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _fresh_state():
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _scaled(val, s):
    """`val` (a tensor or a nested list/tuple/iterable of them) times s. A module-level
    function, not a closure calling itself: that closure would be a reference cycle
    (function -> cell -> function) left for the garbage collector at every step."""
    if isinstance(val, TensorBase):
        return val * s
    if isinstance(val, (list, tuple)):
        return type(val)(_scaled(v, s) for v in val)
    if hasattr(val, "__iter__"):
        return map(functools.partial(_scaled, s=s), val)
    raise ValueError("outputs must be a Tensor or an iterable of Tensors")


def _scale_of(scaler, dtype):
    """The scale as a 0-d array of the loss's dtype: a tg.compile replay's host step,
    so each replay multiplies by the scale of that moment (not the captured number)."""
    return np.asarray(scaler._scale, dtype)


class GradScaler:
    def __init__(self, device="cpu", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        self._enabled = enabled
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale = None              # np.float32 once `scale()` ran
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker = None
            self._per_optimizer_states = {}

    # ---- the scale --------------------------------------------------------------------
    def _lazy_init_scale_growth_tracker(self):
        self._scale = np.float32(self._init_scale)
        self._growth_tracker = self._init_growth_tracker

    def _check_scale_growth_tracker(self, funcname):
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  {fix}")
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  {fix}")
        return self._scale, self._growth_tracker

    def _state(self, optimizer):
        return self._per_optimizer_states.setdefault(id(optimizer), _fresh_state())

    def scale(self, outputs):
        """outputs * scale (a tensor, or a nested list/tuple of tensors)."""
        if not self._enabled:
            return outputs
        if self._scale is None:
            self._lazy_init_scale_growth_tracker()
        s = float(self._scale)  # a Python number: keeps the output's dtype (weak scalar)
        if _tape.current() is not None:  # tg.compile: the scale read anew on each replay
            if isinstance(outputs, TensorBase) and outputs._data.dtype.kind == "f" and \
                    outputs._data.dtype.itemsize >= 4:  # (float16 * a float32 array widens)
                return outputs * like(outputs, _tape.host(_scale_of, self, outputs._data.dtype))
            _tape.data_read("GradScaler.scale of a float16 or nested output")
        return _scaled(outputs, s)

    # ---- unscale / step / update ----------------------------------------------------------
    def _unscale_grads_(self, optimizer, inv_scale, allow_fp16):
        """grad *= inv_scale in place for every parameter; returns 1.0 if any grad had
        an inf or nan (checked before multiplying, as PyTorch's fused kernel does)."""
        found_inf = 0.0
        for group in optimizer.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                g = p.grad._data
                if not allow_fp16 and g.dtype == np.float16:
                    raise ValueError("Attempting to unscale FP16 gradients.")
                if not np.all(np.isfinite(g)):
                    found_inf = 1.0
                if g.flags.writeable:
                    np.multiply(g, g.dtype.type(inv_scale), out=g)
                else:
                    p.grad._data = g * g.dtype.type(inv_scale)
                p.grad._version_counter[0] += 1
        return found_inf

    def unscale_(self, optimizer):
        """Divide the optimizer's gradients by the scale (once per step, optional)."""
        if _tape.current() is not None:  # inside tg.compile's capture: a replayed call
            return _tape.call(GradScaler.unscale_, self, optimizer)
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        state = self._state(optimizer)
        if state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since "
                               "the last update().")
        elif state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = np.float32(1.0 / np.float64(self._scale))  # reciprocal in double
        state["found_inf_per_device"] = {
            self._device: self._unscale_grads_(optimizer, inv_scale, False)}
        state["stage"] = OptState.UNSCALED

    def step(self, optimizer, *args, **kwargs):
        """`unscale_` (unless done), then `optimizer.step()` unless a gradient was inf/nan.
        Returns what optimizer.step returned (None when the step was skipped)."""
        if _tape.current() is not None:  # inside tg.compile's capture: a replayed call
            return _tape.call(GradScaler.step, self, optimizer, *args, **kwargs)
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        state = self._state(optimizer)
        if state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = None
        if not sum(state["found_inf_per_device"].values()):
            retval = optimizer.step(*args, **kwargs)
        state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None):
        """Back off after an overflow, grow after `growth_interval` clean steps (or set
        `new_scale`); then make every optimizer READY for the next iteration."""
        if _tape.current() is not None:  # inside tg.compile's capture: a replayed call
            return _tape.call(GradScaler.update, self, new_scale)
        if not self._enabled:
            return
        self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, TensorBase):
                if new_scale.numel() != 1 or new_scale.requires_grad:
                    raise AssertionError(
                        "new_scale should be a float or a 1-element tensor with "
                        "requires_grad=False.")
                new_scale = new_scale.item()
            self._scale = np.float32(new_scale)
        else:
            found = [v for st in self._per_optimizer_states.values()
                     for v in st["found_inf_per_device"].values()]
            if len(found) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            if sum(found):
                self._scale = np.float32(self._scale * np.float32(self._backoff_factor))
                self._growth_tracker = 0
            else:
                successful = self._growth_tracker + 1
                if successful == self._growth_interval:
                    with np.errstate(over="ignore"):  # inf: the growth is refused below
                        grown = np.float32(self._scale * np.float32(self._growth_factor))
                    if math.isfinite(grown):
                        self._scale = grown
                    self._growth_tracker = 0
                else:
                    self._growth_tracker = successful
        self._per_optimizer_states = {}

    # ---- accessors and state ---------------------------------------------------------------
    def get_scale(self):
        if not self._enabled:
            return 1.0
        return float(self._init_scale if self._scale is None else self._scale)

    def get_growth_factor(self):
        return self._growth_factor

    def set_growth_factor(self, new_factor):
        self._growth_factor = new_factor

    def get_backoff_factor(self):
        return self._backoff_factor

    def set_backoff_factor(self, new_factor):
        self._backoff_factor = new_factor

    def get_growth_interval(self):
        return self._growth_interval

    def set_growth_interval(self, new_interval):
        self._growth_interval = new_interval

    def _get_growth_tracker(self):
        if not self._enabled:
            return 0
        return self._init_growth_tracker if self._growth_tracker is None else \
            int(self._growth_tracker)

    def is_enabled(self):
        return self._enabled

    def state_dict(self):
        if not self._enabled:
            return {}
        return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                "backoff_factor": self._backoff_factor,
                "growth_interval": self._growth_interval,
                "_growth_tracker": self._get_growth_tracker()}

    def load_state_dict(self, state_dict):
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was "
                               "saved from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale = np.float32(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker = state_dict["_growth_tracker"]
