"""The learning-rate scheduler base class (`LRScheduler`) and the helpers every scheduler
shares. The public names live in `tapegrad.optim.lr_scheduler`.

A scheduler rewrites `group['lr']` of its optimizer's param groups each time `step()` is
called (once per epoch, or per batch; AFTER `optimizer.step()`). Creating one performs an
initial step that sets epoch 0's rate. Subclasses implement `get_lr()` (the rates for
epoch `last_epoch`, usually recursively from the current `group['lr']`, so schedulers
can be stacked) and optionally `_get_closed_form_lr()` (used by the deprecated
`step(epoch)`). The attribute names follow PyTorch's, so `state_dict()` (everything but
the optimizer) has the same keys as torch's.
"""
import warnings
import weakref

from ..core import tape as _tape
from .optimizer import Optimizer

__all__ = ["LRScheduler", "_LRScheduler"]

EPOCH_DEPRECATION_WARNING = (
    "The epoch parameter in `scheduler.step()` was not necessary and is being deprecated "
    "where possible. Please use `scheduler.step()` to step the scheduler. During the "
    "deprecation, if epoch is different from None, the closed form is used instead of the "
    "new chainable form, where available.")


def _check_optimizer(optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{type(optimizer).__name__} is not an Optimizer")


def _format_param(name, optimizer, param):
    """One value per param group: a list/tuple must have one per group, a scalar is
    repeated."""
    if isinstance(param, (list, tuple)):
        if len(param) != len(optimizer.param_groups):
            raise ValueError(f"{name} must have the same length as optimizer.param_groups. "
                             f"{name} has {len(param)} values, param_groups has "
                             f"{len(optimizer.param_groups)}.")
        return list(param)
    return [param] * len(optimizer.param_groups)


def _group_values(optimizer, key):
    return [group[key] for group in optimizer.param_groups]


def _warn_get_lr_called_within_step(scheduler):
    if not scheduler._get_lr_called_within_step:
        warnings.warn("To get the last learning rate computed by the scheduler, please use "
                      "`get_last_lr()`.", UserWarning, stacklevel=3)


def _warn_if_optimizer_not_stepped(optimizer):
    # The first step() after construction: if the optimizer has not stepped yet, the
    # schedule's first value was skipped (the order changed in PyTorch 1.1).
    records = getattr(type(optimizer).step, "_records_calls", False)
    if records and not getattr(optimizer, "_opt_called", False):
        warnings.warn("Detected call of `lr_scheduler.step()` before `optimizer.step()`. "
                      "In PyTorch 1.1.0 and later, you should call them in the opposite "
                      "order: `optimizer.step()` before `lr_scheduler.step()`. Failure to do "
                      "this will result in skipping the first value of the learning rate "
                      "schedule.", UserWarning, stacklevel=3)


# every scheduler alive (tg.compile guards the rates a compiled call reads:
# `_compile/python_guards.py`)
live_schedulers = weakref.WeakSet()


class LRScheduler:
    """Base class: subclasses implement `get_lr()` (the rates for epoch `last_epoch`)."""

    _get_lr_called_within_step = False
    _is_initial = False

    def __new__(cls, *args, **kwargs):
        self = super().__new__(cls)
        live_schedulers.add(self)
        return self

    def __init__(self, optimizer, last_epoch=-1):
        _check_optimizer(optimizer)
        self.optimizer = optimizer
        if last_epoch == -1:
            for group in optimizer.param_groups:
                group.setdefault("initial_lr", group["lr"])
        else:
            for i, group in enumerate(optimizer.param_groups):
                if "initial_lr" not in group:
                    raise KeyError(f"param 'initial_lr' is not specified in param_groups[{i}] "
                                   "when resuming scheduler with last_epoch >= 0 (load the "
                                   "optimizer's state dict first, or use last_epoch=-1)")
        self.base_lrs = _group_values(optimizer, "initial_lr")
        self.last_epoch = last_epoch
        self._initial_step()

    def _initial_step(self):
        """Reset the step count and take the step that sets epoch 0's rates."""
        self._step_count = 0
        self._is_initial = True
        try:
            self.step()
        finally:
            self._is_initial = False

    def get_lr(self):
        raise NotImplementedError

    def get_last_lr(self):
        """The learning rates (one per param group) set by the last `step()`."""
        return self._last_lr

    def step(self, epoch=None):
        """Advance one epoch (or jump to `epoch`, using the closed form when there is one;
        deprecated, as in PyTorch)."""
        if _tape.current() is not None:  # inside tg.compile's capture: a replayed call
            return _tape.call(LRScheduler.step, self, epoch)
        if self._step_count == 1:
            _warn_if_optimizer_not_stepped(self.optimizer)
        self._step_count += 1
        if epoch is not None:
            warnings.warn(EPOCH_DEPRECATION_WARNING, UserWarning, stacklevel=2)
        self._update_lr(epoch)

    def _update_lr(self, epoch=None):
        self._get_lr_called_within_step = True
        try:
            if epoch is None:
                self.last_epoch += 1
                values = self.get_lr()
            else:
                self.last_epoch = epoch
                closed = getattr(self, "_get_closed_form_lr", None)
                values = closed() if closed is not None else self.get_lr()
        finally:
            self._get_lr_called_within_step = False
        for group, lr in zip(self.optimizer.param_groups, values):
            group["lr"] = lr
        self._last_lr = _group_values(self.optimizer, "lr")

    def state_dict(self):
        """Everything but the optimizer (save the optimizer's own state dict with it)."""
        return {k: v for k, v in self.__dict__.items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)


_LRScheduler = LRScheduler
