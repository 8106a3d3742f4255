"""`DataParallel`: torch's wrapper, here a pass-through (tapegrad runs on one CPU).

The wrapped model is the child `module`, so state-dict keys get the same "module."
prefix as a torch DataParallel checkpoint, and `model.module` reaches the original."""
from ..modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """`DataParallel(module, device_ids=None, output_device=None, dim=0)`: forward calls
    `module` unchanged (no replicas, no scatter/gather on a single CPU)."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be a tapegrad.nn.Module, not "
                            f"{type(module).__name__}")
        self.module = module
        self.device_ids = [] if device_ids is None else list(device_ids)
        self.output_device = output_device
        self.dim = dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """Functional form: `module(*inputs, **module_kwargs)` on this process."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return module(*inputs, **(module_kwargs or {}))
