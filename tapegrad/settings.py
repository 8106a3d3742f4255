"""Global switches that PyTorch programs set up front: `set_float32_matmul_precision`
is accepted and checked, and changes nothing (NumPy computes float32 matmuls in float32).
`tg.compile` is tapegrad/_compile.
"""
_PRECISIONS = ("highest", "high", "medium")
_matmul = {"precision": "highest"}


def set_float32_matmul_precision(precision):
    if precision not in _PRECISIONS:
        raise RuntimeError(f"set_float32_matmul_precision: invalid precision {precision!r}, "
                           f"expected one of {', '.join(_PRECISIONS)}")
    _matmul["precision"] = precision


def get_float32_matmul_precision():
    return _matmul["precision"]
