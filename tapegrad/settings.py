"""Global switches that PyTorch programs set up front: `compile`,
`set_float32_matmul_precision`; they are accepted and checked, and change nothing yet.

`compile(model)` returns the model (or function) itself: tapegrad has no compiler, and
a program that compiles its model must still run. `compile` also works as a decorator,
with or without arguments (`@torch.compile`, `@torch.compile(mode="max-autotune")`).
"""
_PRECISIONS = ("highest", "high", "medium")
_matmul = {"precision": "highest"}
_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor", mode=None,
            options=None, disable=False):
    if mode not in _MODES:
        raise RuntimeError(f"compile: unrecognized mode={mode!r}, should be one of: "
                           f"{', '.join(m for m in _MODES if m)}")
    if model is None:  # @compile(mode=...) decorates the function it is given next
        return lambda fn: fn
    if not callable(model):
        raise RuntimeError(f"compile: expected a callable (a Module or a function), got "
                           f"{type(model).__name__}")
    return model


def set_float32_matmul_precision(precision):
    if precision not in _PRECISIONS:
        raise RuntimeError(f"set_float32_matmul_precision: invalid precision {precision!r}, "
                           f"expected one of {', '.join(_PRECISIONS)}")
    _matmul["precision"] = precision


def get_float32_matmul_precision():
    return _matmul["precision"]
