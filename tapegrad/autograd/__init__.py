"""Autograd's public API (torch.autograd's names) over the core (tapegrad/core): the
walk, grad modes, Node; and the tools built on them: forward mode, custom Functions,
jacobians/hessians, gradcheck, anomaly and strict mode, why_no_grad."""
from ..core.backward import backward, grad
from ..core.grad_mode import enable_grad, inference_mode, is_grad_enabled, no_grad, set_grad_enabled
from ..core.node import Node
from ..core.state import state as _state
from . import forward_ad, functional  # noqa: E402  forward mode, jacobian/hessian
from .function import Function, FunctionCtx, once_differentiable  # noqa: E402
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .anomaly import (detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled,
                      set_detect_anomaly)
from .strict import StrictModeError, is_strict_enabled, set_strict, strict
from .why_no_grad import NoGradReport, why_no_grad

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled", "inference_mode", "Node", "record_sites", "gradcheck", "gradgradcheck",
           "GradcheckError", "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled", "set_strict", "strict", "is_strict_enabled",
           "StrictModeError", "why_no_grad", "NoGradReport"]


class record_sites:
    """Record where each op was created (file:line) inside this block; a decorator too.

    Costs a stack walk per op, so it is off by default; anomaly mode turns it on.
    """

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        _state.record_sites += 1 if self.mode else 0
        return self

    def __exit__(self, *exc):
        _state.record_sites -= 1 if self.mode else 0
        return False
from .variable import Variable  # noqa: E402  the pre-0.4 wrapper: a tensor
