"""Schedulers made of schedulers: SequentialLR (one after another, switching at
milestones) and ChainedScheduler (all of them every step, their factors multiplying)
(public through `tapegrad.optim.lr_scheduler`). Their state dicts nest the members'."""
from bisect import bisect_right

from ._lr_plateau import ReduceLROnPlateau
from ._scheduler import LRScheduler, _group_values

__all__ = ["SequentialLR", "ChainedScheduler"]


def _check_members(owner, optimizer, schedulers):
    name = type(owner).__name__
    if len(schedulers) < 1:
        raise ValueError(f"{name} expects at least one scheduler, but got no scheduler.")
    for idx, scheduler in enumerate(schedulers):
        if not hasattr(scheduler, "optimizer"):
            raise TypeError(f"{name} at index {idx} should have `optimizer` as its attribute.")
        if isinstance(scheduler, ReduceLROnPlateau):
            raise ValueError(f"{name} does not support `ReduceLROnPlateau` scheduler as it "
                             "requires additional kwargs to be specified when calling `step`, "
                             f"but got one at index {idx} in the given schedulers sequence.")
        if optimizer != scheduler.optimizer:
            raise ValueError(f"{name} expects all schedulers to belong to the same optimizer, "
                             f"but got scheduler {type(scheduler).__name__} at index {idx} "
                             f"has {scheduler.optimizer}, which is different from "
                             f"{type(optimizer).__name__}.")


class _NestedStateDict:
    """state_dict/load_state_dict that store each member scheduler's own state dict."""

    def state_dict(self):
        sd = {k: v for k, v in self.__dict__.items() if k not in ("optimizer", "_schedulers")}
        sd["_schedulers"] = [s.state_dict() for s in self._schedulers]
        return sd

    def load_state_dict(self, state_dict):
        state_dict = dict(state_dict)
        members = state_dict.pop("_schedulers")
        self.__dict__.update(state_dict)
        for s, member in zip(self._schedulers, members):
            s.load_state_dict(member)


class SequentialLR(_NestedStateDict, LRScheduler):
    """Run schedulers[0] until milestones[0], then schedulers[1] (restarted at its epoch 0)
    until milestones[1], and so on."""

    def __init__(self, optimizer, schedulers, milestones, last_epoch=-1):
        _check_members(self, optimizer, schedulers)
        if len(milestones) != len(schedulers) - 1:
            raise ValueError("Sequential Schedulers expects number of schedulers provided to be "
                             "one more than the number of milestone points, but got number of "
                             f"schedulers {len(schedulers)} and the number of milestones to be "
                             f"equal to {len(milestones)}")
        self._schedulers = schedulers
        self._milestones = milestones
        self.last_epoch = last_epoch + 1
        self.optimizer = optimizer
        # Creating the members already stepped each once: undo that, then start the first.
        for group in self.optimizer.param_groups:
            group["lr"] = group["initial_lr"]
        self.recursive_undo()
        idx = bisect_right(self._milestones, 0)
        self._schedulers[idx]._initial_step()
        self._last_lr = schedulers[idx].get_last_lr()

    def recursive_undo(self, sched=None):
        """Decrement last_epoch of every member (through nested SequentialLRs); an explicit
        stack, not recursion, despite the name kept from PyTorch."""
        stack = [self if sched is None else sched]
        while stack:
            s = stack.pop()
            if hasattr(s, "_schedulers"):
                stack.extend(reversed(s._schedulers))
            elif hasattr(s, "last_epoch"):
                s.last_epoch -= 1

    def step(self):
        self.last_epoch += 1
        idx = bisect_right(self._milestones, self.last_epoch)
        scheduler = self._schedulers[idx]
        if idx > 0 and self._milestones[idx - 1] == self.last_epoch:
            scheduler._update_lr(0)  # the new scheduler starts at its own epoch 0
        else:
            scheduler.step()
        self._last_lr = scheduler.get_last_lr()


class ChainedScheduler(_NestedStateDict, LRScheduler):
    """Step every scheduler in turn each step (their multiplicative updates compose)."""

    def __init__(self, schedulers, optimizer=None):
        if len(schedulers) < 1:
            raise ValueError(f"{type(self).__name__} expects at least one scheduler to be "
                             "chained, but got no scheduler.")
        optimizer = optimizer or schedulers[0].optimizer
        _check_members(self, optimizer, schedulers)
        self._schedulers = schedulers
        self.optimizer = optimizer
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")

    def step(self):
        for scheduler in self._schedulers:
            scheduler.step()
        self._last_lr = _group_values(self._schedulers[-1].optimizer, "lr")
