"""`functorch`'s module API as torch 2.13 still ships it (`import functorch`, deprecated
there in favour of `torch.func.functional_call`): `make_functional(model)` and
`make_functional_with_buffers(model)`, used by PyTorch's older forward-AD, per-sample
gradient and ensembling tutorials, and the transforms functorch re-exports.

    func, params, buffers = make_functional_with_buffers(model)
    func(params, buffers, x)          # model(x) with those tensors as its state

As in functorch, the model is deep-copied and the copy's own Parameters and buffers are
returned (so the original model is untouched), in `named_parameters()` /
`named_buffers()` order (tied tensors once); `func` is an nn.Module holding the copy
(so `func.eval()` reaches it) and calls it through `func.functional_call`.
"""
import copy
import warnings

from .func import (functional_call, grad, grad_and_value, hessian, jacfwd, jacrev, jvp,
                   vjp, vmap)
from .nn.modules.module import Module

__all__ = ["make_functional", "make_functional_with_buffers", "FunctionalModule",
           "FunctionalModuleWithBuffers", "vmap", "grad", "grad_and_value", "jacrev",
           "jacfwd", "jvp", "vjp", "hessian", "functional_call"]


class FunctionalModuleWithBuffers(Module):
    """The callable `make_functional_with_buffers` returns:
    `fmodel(params, buffers, *args, **kwargs)`."""

    def __init__(self, stateless_model, param_names, buffer_names):
        super().__init__()
        # A submodule, as functorch's, so fmodel.eval()/train() reach it; its own
        # tensors are the ones returned (functorch's copy holds meta placeholders).
        self.stateless_model = stateless_model
        self.param_names = tuple(param_names)
        self.buffer_names = tuple(buffer_names)

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy = copy.deepcopy(model)
        named_p = list(model_copy.named_parameters())
        named_b = list(model_copy.named_buffers())
        params = tuple(p for _, p in named_p)
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        fmodel = FunctionalModuleWithBuffers(model_copy, [n for n, _ in named_p],
                                             [n for n, _ in named_b])
        return fmodel, params, tuple(b for _, b in named_b)

    def forward(self, params, buffers, *args, **kwargs):
        params, buffers = tuple(params), tuple(buffers)
        _check_count("params", params, self.param_names)
        _check_count("buffers", buffers, self.buffer_names)
        state = dict(zip(self.param_names, params))
        state.update(zip(self.buffer_names, buffers))
        return functional_call(self.stateless_model, state, args, kwargs)


class FunctionalModule(Module):
    """The callable `make_functional` returns: `fmodel(params, *args, **kwargs)`."""

    def __init__(self, stateless_model, param_names):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = tuple(param_names)

    @staticmethod
    def _create_from(model, disable_autograd_tracking=False):
        model_copy = copy.deepcopy(model)
        named_p = list(model_copy.named_parameters())
        params = tuple(p for _, p in named_p)
        if disable_autograd_tracking:
            for p in params:
                p.requires_grad_(False)
        return FunctionalModule(model_copy, [n for n, _ in named_p]), params

    def forward(self, params, *args, **kwargs):
        params = tuple(params)
        _check_count("params", params, self.param_names)
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)),
                               args, kwargs)


def _check_count(what, given, names):
    # functorch zips silently; a wrong count there gives a confusing error later
    if len(given) != len(names):
        raise ValueError(f"functorch: expected {len(names)} {what} ({', '.join(names)}), "
                         f"got {len(given)}")


def _deprecated(name):
    warnings.warn(f"We've integrated functorch into PyTorch. As the final step of the "
                  f"integration, `functorch.{name}` is deprecated as of PyTorch 2.0 and will "
                  "be deleted in a future version of PyTorch >= 2.3. Please use "
                  "`torch.func.functional_call` instead", FutureWarning, stacklevel=3)


def make_functional(model, disable_autograd_tracking=False):
    """(fmodel, params): the model as a function of its parameters. A model with
    buffers needs `make_functional_with_buffers` (functorch's error)."""
    _deprecated("make_functional")
    if not isinstance(model, Module):
        raise RuntimeError(f"Expected a torch.nn.Module, got {type(model).__name__}")
    if len(tuple(model.buffers())) > 0:
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    return FunctionalModule._create_from(model, disable_autograd_tracking)


def make_functional_with_buffers(model, disable_autograd_tracking=False):
    """(fmodel, params, buffers): the model as a function of its parameters and
    buffers."""
    _deprecated("make_functional_with_buffers")
    if not isinstance(model, Module):
        raise RuntimeError(f"Expected a torch.nn.Module, got {type(model).__name__}")
    return FunctionalModuleWithBuffers._create_from(model, disable_autograd_tracking)
