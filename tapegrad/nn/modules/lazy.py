"""torch.nn.modules.lazy: `LazyModuleMixin`, the modules whose parameter shapes come from
their first input (`nn.LazyLinear(10)` learns `in_features` from the first batch).

Until then the parameters and buffers are `UninitializedParameter`/`UninitializedBuffer`
placeholders (nn/parameter.py): any op on them raises torch's ValueError, `state_dict`
holds them as they are, `load_state_dict` materializes them with the checkpoint's shapes.
A forward pre-hook runs `initialize_parameters(*args)` before the first forward; once
nothing is uninitialized the hook is removed and the module's class becomes
`cls_to_become` (LazyLinear -> Linear), as torch does, so `type(m) == nn.Linear` checks
(d2l's init functions) see the ordinary class. The placeholders are materialized in place,
so an optimizer built before the first forward holds the real parameters afterwards.
"""
from ...autograd import no_grad
from ..parameter import is_lazy

__all__ = ["LazyModuleMixin"]


class LazyModuleMixin:
    """Mixin for modules that infer their parameters' shapes from the first input.
    A subclass defines `initialize_parameters(*args)` and `cls_to_become`."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._initialize_hook = self.register_forward_pre_hook(_infer_parameters)

    def has_uninitialized_params(self):
        """Whether a parameter or buffer of this module still has no shape."""
        for t in list(self._parameters.values()) + list(self._buffers.values()):
            if is_lazy(t):
                return True
        return False

    def initialize_parameters(self, *args, **kwargs):
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{type(self).__name__}")

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


def _infer_parameters(module, args):
    """The forward pre-hook: materialize from the first input, then become the plain
    class (torch's `_infer_parameters`)."""
    with no_grad():
        module.initialize_parameters(*args)
    if module.has_uninitialized_params():
        raise RuntimeError(f"module {module._get_name()} has not been fully initialized")
    module._initialize_hook.remove()
    del module._initialize_hook
    if module.cls_to_become is not None:
        module.__class__ = module.cls_to_become
