"""Autograd: recording (graph.py), the backward walk (engine.py), grad modes, hooks."""
from .engine import backward, grad
from .grad_mode import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .graph import Node
from . import forward_ad, functional  # noqa: E402  forward mode, jacobian/hessian
from .function import Function, FunctionCtx, once_differentiable  # noqa: E402
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)
from .strict import StrictModeError, is_strict_enabled, set_strict, strict

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled", "Node", "record_sites", "gradcheck", "gradgradcheck",
           "GradcheckError", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_strict", "strict", "is_strict_enabled",
           "StrictModeError"]


class record_sites:
    """Record where each op was created (file:line) inside this block; a decorator too.

    Costs a stack walk per op, so it is off by default; anomaly mode turns it on.
    """

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        from . import graph
        graph._site_state["record"] += 1 if self.mode else 0
        return self

    def __exit__(self, *exc):
        from . import graph
        graph._site_state["record"] -= 1 if self.mode else 0
        return False
