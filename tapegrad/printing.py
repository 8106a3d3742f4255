"""Printing tensors as PyTorch prints them: `tensor([0.0100, 0.0607])`.

`repr_tensor(t)` follows torch's rules: one format for all elements, chosen from the
non-zero finite values (whole numbers print as `1.`, `sci_mode` switches to `1.0000e+05`
when max/min > 1000, max > 1e8 or min < 1e-4), right-aligned to one width, rows wrapped
at `linewidth`, tensors of more than `threshold` elements summarised to `edgeitems` per
edge with `...`; then the suffixes: `dtype=` unless the dtype is the default float,
int64 or bool, `size=` for empty tensors that are not 1-d, and `grad_fn=<MulBackward0>`
(torch's node names, core/names.py) or `requires_grad=True`, and a dual's `tangent=`.
`set_printoptions` / `get_printoptions` / `printoptions` are torch's.
"""
import contextlib
import math

import numpy as np

from . import dtypes as _dt
from .core import names as _names
from .core import tape as _tape
from .core.tensor_base import TensorBase, like

PREFIX = "tapegrad"  # how dtypes print: dtype=tapegrad.float64 (torch: torch.float64)
_DEFAULTS = {"precision": 4, "threshold": 1000, "edgeitems": 3, "linewidth": 80}
_PROFILES = {"default": _DEFAULTS,
             "short": {"precision": 2, "threshold": 1000, "edgeitems": 2, "linewidth": 80},
             "full": {"precision": 4, "threshold": math.inf, "edgeitems": 3, "linewidth": 80}}
OPTS = dict(_DEFAULTS, sci_mode=None)


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """torch.set_printoptions. As in torch, `sci_mode` is reset to None (automatic) by
    every call that does not give it."""
    if profile is not None:
        if profile not in _PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of "
                             f"{', '.join(_PROFILES)}, got {profile!r}")
        OPTS.update(_PROFILES[profile])
    for k, v in (("precision", precision), ("threshold", threshold),
                 ("edgeitems", edgeitems), ("linewidth", linewidth)):
        if v is not None:
            OPTS[k] = v
    OPTS["sci_mode"] = sci_mode


def get_printoptions():
    return dict(OPTS)


@contextlib.contextmanager
def printoptions(**kwargs):
    old = get_printoptions()
    set_printoptions(**kwargs)
    try:
        yield
    finally:
        set_printoptions(**old)


class _Formatter:
    """One format for every element (torch's _Formatter), chosen from `arr`: the values
    that will be shown."""

    def __init__(self, arr):
        self.floating = arr.dtype.kind == "f"
        self.int_mode, self.sci_mode, self.width = True, False, 1
        p = OPTS["precision"]
        if not self.floating:
            for v in arr.reshape(-1).tolist():
                self.width = max(self.width, len(str(v)))
            return
        flat = arr.reshape(-1)
        vals = flat[np.isfinite(flat) & (flat != 0)]
        if vals.size == 0:
            return
        a = np.abs(vals).astype(np.float64)
        lo, hi = a.min(), a.max()
        self.int_mode = bool(np.all(vals == np.ceil(vals)))
        self.sci_mode = (hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
                         if OPTS["sci_mode"] is None else OPTS["sci_mode"])
        pylist = vals.tolist()
        if self.sci_mode:
            self.width = max(len(f"{v:.{p}e}") for v in pylist)
        elif self.int_mode:
            self.width = max(len(f"{v:.0f}") + 1 for v in pylist)
        else:
            self.width = max(len(f"{v:.{p}f}") for v in pylist)

    def format(self, v):
        if self.floating:
            p = OPTS["precision"]
            if self.sci_mode:
                s = f"{v:{self.width}.{p}e}"
            elif self.int_mode:
                s = f"{v:.0f}"
                if not (math.isinf(v) or math.isnan(v)):
                    s += "."
            else:
                s = f"{v:.{p}f}"
        else:
            s = str(v)
        return " " * (self.width - len(s)) + s


def _summarized(arr, edge):
    """The elements a summarised print shows (edge rows of every dim), for the widths."""
    for axis in range(arr.ndim):
        n = arr.shape[axis]
        if n > 2 * edge:
            idx = np.r_[0:edge, n - edge:n]
            arr = np.take(arr, idx, axis=axis)
    return arr


def _vector(arr, indent, summarize, fmt):
    edge, width = OPTS["edgeitems"], OPTS["linewidth"]
    per_line = max(1, math.floor((width - indent) / (fmt.width + 2)))
    if summarize and not edge:
        items = ["..."]
    elif summarize and arr.shape[0] > 2 * edge:
        items = ([fmt.format(v) for v in arr[:edge].tolist()] + [" ..."]
                 + [fmt.format(v) for v in arr[-edge:].tolist()])
    else:
        items = [fmt.format(v) for v in arr.tolist()]
    lines = [", ".join(items[i:i + per_line]) for i in range(0, len(items), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _body(arr, indent, summarize, fmt):
    # Nested dims: depth is bounded by arr.ndim (not a graph walk).
    if arr.ndim == 0:
        return fmt.format(arr.item())
    if arr.ndim == 1:
        return _vector(arr, indent, summarize, fmt)
    edge, n = OPTS["edgeitems"], arr.shape[0]
    if summarize and n > 2 * edge:
        rows = ([_body(arr[i], indent + 1, summarize, fmt) for i in range(edge)] + ["..."]
                + [_body(arr[i], indent + 1, summarize, fmt) for i in range(n - edge, n)])
    else:
        rows = [_body(arr[i], indent + 1, summarize, fmt) for i in range(n)]
    return "[" + ("," + "\n" * (arr.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def array_str(arr, indent=0):
    """The bracketed values of `arr` as torch prints them (no `tensor(`, no suffixes)."""
    if arr.size == 0:
        return "[]"
    summarize = arr.size > OPTS["threshold"]
    shown = _summarized(arr, OPTS["edgeitems"]) if summarize and arr.ndim else arr
    return _body(arr, indent, summarize, _Formatter(shown))


def dtype_str(dtype):
    return f"{PREFIX}.{np.dtype(dtype).name}"


def _with_suffixes(text, suffixes, indent):
    out = [text]
    last = len(text) - text.rfind("\n") + 1  # torch's count (2 more without a newline)
    for s in suffixes:
        if last + len(s) + 2 > OPTS["linewidth"]:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    return "".join(out) + ")"


def repr_tensor(t):
    _tape.data_read("printing a tensor")
    prefix = "tensor("
    indent = len(prefix)
    arr = t._data
    default = _dt.get_default_dtype()
    suffixes = []
    if arr.size == 0:
        if arr.ndim != 1:
            suffixes.append(f"size={tuple(arr.shape)}")
        if arr.dtype != default:
            suffixes.append("dtype=" + dtype_str(arr.dtype))
        text = "[]"
    else:
        if not OPTS["edgeitems"]:
            suffixes.append(f"size={tuple(arr.shape)}")
        if arr.dtype not in (default, np.dtype("int64"), np.dtype("bool")):
            suffixes.append("dtype=" + dtype_str(arr.dtype))
        text = array_str(arr, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{_names.node_name(t.grad_fn)}>")
    elif t._rg:
        suffixes.append("requires_grad=True")
    fw = t._fw  # a forward-mode dual prints its tangent (an array, so no history)
    if fw is not None:
        fw = np.asarray(fw._data if isinstance(fw, TensorBase) else fw)
        suffixes.append("tangent=" + (str(fw.item()) if fw.ndim == 0
                                      else repr_tensor(like(t, fw))))
    return _with_suffixes(prefix + text, suffixes, indent)
