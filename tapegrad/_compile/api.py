"""`tg.compile`: PyTorch's `torch.compile` API over capture and replay (runner.py).

`compile(module)` returns an `OptimizedModule` as torch 2.13 does: the original module is
its child `_orig_mod` (so state_dict keys carry the `_orig_mod.` prefix, which nanoGPT
strips on load), attributes, `train()`/`eval()`, `parameters()` reach the original, and
its repr is torch's. `compile(fn)` returns a function. Both forms work as decorators, with
or without arguments. `mode=` is checked; `disable=True` returns the callable itself, as
torch does (eager).
"""
import functools

from ..nn.modules.module import Module
from .runner import Runner

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


class OptimizedModule(Module):
    """A compiled module: calls go through the runner; everything else to `_orig_mod`."""

    _opt_mod_attributes = {"_orig_mod", "_runner", "forward", "_super_module_initialized",
                           "explain", "code"}

    def __init__(self, mod, fullgraph=False):
        object.__setattr__(self, "_super_module_initialized", False)
        Module.__init__(self)
        self._modules["_orig_mod"] = mod
        object.__setattr__(self, "_runner", Runner(mod.__call__, mod, fullgraph))
        object.__setattr__(self, "_super_module_initialized", True)

    def forward(self, *args, **kwargs):
        return self._runner(*args, **kwargs)

    def explain(self):
        """The generated replay of each capture, as text (or why a call runs eagerly)."""
        return self._runner.explain()

    @property
    def code(self):
        return self._runner.explain()

    @property
    def training(self):
        return self._orig_mod.training

    @training.setter
    def training(self, value):
        if self._super_module_initialized:
            self._orig_mod.training = value

    def __getattr__(self, name):
        mods = self.__dict__.get("_modules")
        if mods is None:  # not initialised yet (copy, pickle): no attribute at all
            raise AttributeError(name)
        if name == "_orig_mod":
            return mods["_orig_mod"]
        return getattr(mods["_orig_mod"], name)

    def __reduce__(self):
        # a copy or an unpickled module starts with no captures (torch's rebuilds too)
        return (type(self), (self._orig_mod, self._runner.fullgraph))

    def __setattr__(self, name, value):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__setattr__(name, value)
        return setattr(self._orig_mod, name, value)

    def __delattr__(self, name):
        if hasattr(type(self), name) or name in OptimizedModule._opt_mod_attributes:
            return super().__delattr__(name)
        return delattr(self._orig_mod, name)

    def __len__(self):
        return len(self._orig_mod)

    def __dir__(self):
        own = self._orig_mod.__dir__()
        return own + [a for a in super().__dir__() if a not in own]


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    if mode not in _MODES:
        raise RuntimeError(f"compile: unrecognized mode={mode!r}, should be one of: "
                           f"{', '.join(m for m in _MODES if m)}")
    if model is None:  # @compile(mode=...) decorates the function it is given next
        return lambda fn: compile(fn, fullgraph=fullgraph, dynamic=dynamic, backend=backend,
                                  mode=mode, options=options, disable=disable)
    if not callable(model):
        raise RuntimeError(f"compile: expected a callable (a Module or a function), got "
                           f"{type(model).__name__}")
    if disable:
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph)
    runner = Runner(model, fullgraph=fullgraph)

    @functools.wraps(model)
    def compiled(*args, **kwargs):
        return runner(*args, **kwargs)
    compiled._torchdynamo_orig_callable = model
    compiled._runner = runner
    compiled.explain = runner.explain  # the generated replay as text
    return compiled
