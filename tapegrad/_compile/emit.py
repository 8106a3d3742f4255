"""The hot ops written out as NumPy expressions in the generated replay (codegen.py).

A captured op step is usually emitted as a call of its table entry's forward, and its
rules as calls of its vjps, with the checks eager makes around them (result type, the
default dtype, a gradient's shape and dtype against its input's). For the ops below,
when everything those checks decide is known at capture time (every input an array of
one float dtype, float32 or float64, with its shape; the keyword arguments constants),
the emitted line IS the kernel's arithmetic, with the decisions folded in:

    v4 = v2 + v3                       # add
    v5 = np.tanh(v4)                   # tanh
    d5_0 = g5 * (1.0 - v5 * v5)        # tanh's rule, from its saved output

Each expression is the one the entry's own forward or rule computes (the same NumPy
calls in the same order: the same bits; tests/test_compile_emit.py compares them with
eager), so a printed replay reads as the step's arithmetic. `FORWARD[name](ins, kw,
metas)` and `VJP[name](i, g, ans, ins, kw, metas, out_meta)` return lines in which `{o}`
names the result, and (for a rule) the result's (shape, dtype, fresh): fresh, a new
array of its own (not a view, not g itself), which the engine may make `.grad` as it
is; None: the generic call.
float16 (computed in float32 and rounded: core/opmath.py) and integer inputs always take
the generic call.
"""
import math

import numpy as np

_F = (np.dtype("float32"), np.dtype("float64"))
NS = {"matmul": np.matmul, "add_reduce": np.add.reduce, "maximum": np.maximum,
      "max_reduce": np.maximum.reduce,
      "empty": np.empty, "float32": _F[0], "float64": _F[1]}


def float_metas(metas):
    """The one float dtype (float32/float64) of these (shape, dtype) metas, or None."""
    d = None
    for m in metas:
        if m is None or m[1] not in _F or (d is not None and m[1] != d):
            return None
        d = m[1]
    return d


def _bshape(*shapes):
    return np.broadcast_shapes(*shapes)


# ---- forwards: (ins, kw, metas) -> lines ------------------------------------------------
def _binary(sym):
    def f(ins, kw, metas):
        if len(ins) != 2 or kw or None in metas:
            return None
        return [f"{{o}} = {ins[0]} {sym} {ins[1]}"]
    return f


def _unary(fn):
    def f(ins, kw, metas):
        if len(ins) != 1 or kw or None in metas:
            return None
        return [f"{{o}} = np.{fn}({ins[0]})"]
    return f


def _relu(ins, kw, metas):
    # the entry's np.maximum(x, 0).astype(x.dtype, copy=False): the cast is no copy
    return [f"{{o}} = maximum({ins[0]}, 0)"] if metas == [metas[0]] and metas[0] and not kw \
        else None


def _sum(ins, kw, metas):
    if len(ins) != 1 or set(kw) - {"axis", "keepdims"} or not metas[0] or not metas[0][0]:
        return None
    axis, keepdims = kw.get("axis"), bool(kw.get("keepdims", False))
    if axis is None and not keepdims:  # a NumPy scalar: the array of it
        return [f"{{o}} = asarray(add_reduce({ins[0]}, axis=None))"]
    return None


def _linear(ins, kw, metas):
    if kw or len(ins) not in (2, 3) or None in metas[:2]:
        return None
    x, w = ins[0], ins[1]
    xs = metas[0][0]
    b = f", {ins[2]}" if len(ins) == 3 and metas[2] is not None else ""
    if len(xs) == 2:
        return [f"{{o}} = linear_rows({x}, {w}{b})"]
    if len(xs) > 2:  # leading dims folded into the rows: one gemm (the entry's comment)
        return [f"{{o}} = linear_rows({x}.reshape(-1, {xs[-1]}), {w}{b}).reshape("
                f"{tuple(xs[:-1]) + (metas[1][0][0],)})"]
    return None


def _reshape(ins, kw, metas):
    if len(ins) != 1 or set(kw) != {"shape"} or not metas[0]:
        return None
    return [f"{{o}} = {ins[0]}.reshape({tuple(kw['shape'])!r})"]


def _matmul(ins, kw, metas):
    if kw or len(ins) != 2 or None in metas or not metas[0][0] or not metas[1][0]:
        return None
    return [f"{{o}} = matmul({ins[0]}, {ins[1]})"]  # (the shapes were checked at capture)


def _bn(ins, kw, metas):
    """Training-mode batch norm of an (N, C) input with weight and bias: the entry's
    arithmetic (`_bn_forward`), its saved values named {mean} {var} {invstd} {xhat}."""
    if (len(ins) != 3 or None in metas or len(metas[0][0]) != 2 or kw.get("axes") != (0,)
            or set(kw) != {"axes", "eps", "correction"} or metas[1][0] != metas[0][0][1:]
            or metas[2][0] != metas[0][0][1:] or type(kw["eps"]) is not float):
        return None
    x, w, b = ins
    n, c = metas[0][0][0], kw["correction"]
    return [f"{{mean}} = add_reduce({x}, axis=(0,), keepdims=True) / {n}",
            f"{{t}} = {x} - {{mean}}",
            f"{{var}} = add_reduce({{t}} * {{t}}, axis=(0,), keepdims=True) / {n - c}",
            f"{{invstd}} = 1.0 / np.sqrt({{var}} + {kw['eps']!r})",
            "{xhat} = {t} * {invstd}",
            f"{{o}} = {{xhat}} * {w}.reshape({(1, metas[1][0][0])})",
            f"{{o}} += {b}.reshape({(1, metas[2][0][0])})"]


def _ce(ins, kw, metas):
    """Cross-entropy of (N, C) logits and class indices, mean over the rows, no class
    weights, no smoothing: the entry's common case (`_ce_forward`) when every target is
    a class (one check per call, as the entry's); otherwise the entry itself, whose saved
    values then name the general case (ignored rows) or which raises (a bad target)."""
    if (len(ins) != 3 or ins[2] != "None" or metas[0] is None or len(metas[0][0]) != 2
            or metas[1] is None or metas[1][1].kind != "i" or metas[1][0] != metas[0][0][:1]
            or not metas[0][0][0] or kw.get("reduction") != "mean"
            or kw.get("label_smoothing") != 0.0 or set(kw) != {"ignore_index",
                                                                "label_smoothing", "reduction"}
            or 0 <= kw["ignore_index"] < metas[0][0][1]):
        return None
    x, y = ins[0], ins[1]
    (n, c), dt = metas[0]
    consts = {"AR": np.arange(n), "DN": dt.type(n)}
    consts["AR"].flags.writeable = False
    return [f"if index_top({y}) < {c}:",
            f"    {{lsm}} = {x} - max_last({x})" if n >= 32 else  # the entry's row max
            f"    {{lsm}} = {x} - max_reduce({x}, axis=1, keepdims=True)",
            "    {lsm} -= np.log(add_reduce(np.exp({lsm}), axis=1, keepdims=True))",
            "    {wy} = {keep} = None",
            f"    {{safe}} = {y}.copy()",
            "    {denom} = {DN}",
            f"    {{o}} = asarray((-add_reduce({{lsm}}[{{AR}}, {{safe}}], axis=None) / {{denom}})"
            f".astype({dt.name}, copy=False))",
            "else:  # ignored rows, or a target out of range (the entry raises)",
            f"    {{o}}, {{t}} = ce_fwd({x}, {y}, None, **{{K}})",
            "    {o} = asarray({o})",
            "    {lsm}, {wy}, {keep}, {safe}, {denom} = ({t}['lsm'], {t}['wy'], {t}['keep'], "
            "{t}['safe'], {t}['denom'])"], consts


def ce_rule(g, ans, ins, saved):
    """cross_entropy's rule (`_ce_dx`): softmax - onehot, times g / n; the entry's own
    rule for the general case."""
    x, y = ins[0], ins[1]
    sv = ", ".join(f"{k}={saved[k]}" for k in ("lsm", "wy", "keep", "safe", "denom"))
    return [f"if {saved['wy']} is None:",
            f"    {{d}} = np.exp({saved['lsm']})",
            f"    {{d}}[{{AR}}, {saved['safe']}] -= 1.0",
            f"    {{d}} *= {g} / {saved['denom']}",  # (in place on the fresh exp)
            "else:",
            f"    {{d}} = ce_dx(np, {g}, {ans}, {x}, {y}, None, **{{K}}, {sv})"]


def _ln(ins, kw, metas):
    """Layer norm over trailing axes with weight and bias: the entry's kernel
    (`layer_norm_rows`, eager's `_ln_forward`: C or NumPy), which also returns the
    saved xhat and invstd the rules read."""
    if (len(ins) != 3 or None in metas or set(kw) != {"axes", "eps"}
            or type(kw["eps"]) is not float):
        return None
    shape = metas[0][0]
    axes = tuple(a % len(shape) for a in kw["axes"]) if shape else None
    if (not axes or axes != tuple(range(len(shape) - len(axes), len(shape)))
            or metas[1][0] != shape[axes[0]:] or metas[2][0] != shape[axes[0]:]):
        return None
    x, w, b = ins
    return [f"{{o}}, {{xhat}}, {{invstd}} = layer_norm_rows({x}, {w}, {b}, "
            f"axes={tuple(kw['axes'])!r}, eps={kw['eps']!r})"]


def ln_rule(i, g, ins, kw, metas, saved):
    """layer_norm's rule for input i (`_ln_dx`, `_ln_dw`, `_ln_db`): (lines for {d},
    (shape, dtype, fresh))."""
    w = ins[1]
    shape = metas[0][0]
    lead = tuple(range(len(shape) - len(metas[1][0])))
    if i == 0:
        n = math.prod(metas[1][0])
        return [f"{{d}} = ng_fwd({g} * {w}, {saved['xhat']}, {saved['invstd']}, "
                f"axes={tuple(kw['axes'])!r}, n={n}, correction=0)"], metas[0] + (True,)
    a = f"{g} * {saved['xhat']}" if i == 1 else g
    if not lead:
        return [f"{{d}} = {a}"], metas[i] + (False,)
    return [f"{{d}} = sum_to_fwd({a}, axes={lead!r}, shape={tuple(metas[i][0])!r})"], \
        metas[i] + (len(metas[i][0]) == 1,)  # (a 1-D sum is a new array: _rowsum.py)


def _embedding(ins, kw, metas):
    # the entry's `w[idx]` (padding_idx matters to the rule only)
    if len(ins) != 2 or metas[1] is None or metas[1][1].kind not in "iu" or \
            set(kw) - {"padding_idx"}:
        return None
    return [f"{{o}} = {ins[0]}[{ins[1]}]"]


def _mean(ins, kw, metas):
    if len(ins) != 1 or set(kw) - {"axis", "keepdims"} or not metas[0] or not metas[0][0]:
        return None
    if kw.get("axis") is None and not kw.get("keepdims", False):  # the entry's x.mean()
        return [f"{{o}} = asarray({ins[0]}.mean(axis=None, keepdims=False))"]
    return None


def _permute(ins, kw, metas):
    if len(ins) != 1 or set(kw) != {"dims"} or not metas[0]:
        return None
    return [f"{{o}} = {ins[0]}.transpose({tuple(kw['dims'])!r})"]


def _gelu(ins, kw, metas):
    """gelu (the erf form) of a float32 array: the entry's kernel (`_gelu_f32`), which
    returns gelu'(x) as well, saved for the rule as {dgelu} (float64 saves Phi(x): the
    generic call)."""
    if len(ins) != 1 or kw != {"approximate": "none"} or not metas[0] or \
            metas[0][1] != _F[0]:
        return None
    return [f"{{o}}, {{dgelu}} = gelu_f32({ins[0]})"]


def gelu_rule(g, saved):
    """gelu's rule from the forward's gelu'(x): g * gelu'(x) (the partial's product)."""
    return [f"{{d}} = {g} * {saved['dgelu']}"]


FORWARD = {"add": _binary("+"), "sub": _binary("-"), "mul": _binary("*"),
           "div": _binary("/"), "tanh": _unary("tanh"), "exp": _unary("exp"),
           "log": _unary("log"), "relu": _relu, "sum": _sum, "linear": _linear,
           "reshape": _reshape, "matmul": _matmul, "batch_norm": _bn,
           "cross_entropy": _ce, "layer_norm": _ln, "embedding": _embedding,
           "mean": _mean, "permute": _permute, "gelu": _gelu}
# the ops whose forward also names saved values ({key} in its lines)
SAVES = {"gelu": ("dgelu",),
         "batch_norm": ("mean", "var", "invstd", "xhat"),
         "cross_entropy": ("lsm", "wy", "keep", "safe", "denom"),
         "layer_norm": ("invstd", "xhat")}
# ops whose inputs are not all of one float dtype: how many leading inputs must be
MIXED = {"cross_entropy": 1, "embedding": 1}


# ---- rules: (i, g, ans, ins, kw, metas, out_meta) -> (lines, (shape, dtype)) ------------
def _add_vjp(i, g, ans, ins, kw, metas, om):
    return [f"{{o}} = {g}"], om + (False,)  # the same array for both inputs (the rule's)


def _sub_vjp(i, g, ans, ins, kw, metas, om):
    return ([f"{{o}} = {g}"], om + (False,)) if i == 0 else ([f"{{o}} = -{g}"], om + (True,))


def _mul_vjp(i, g, ans, ins, kw, metas, om):
    return [f"{{o}} = {g} * {ins[1 - i]}"], om + (True,)


def _tanh_vjp(i, g, ans, ins, kw, metas, om):
    return [f"{{o}} = {g} * (1.0 - {ans} * {ans})"], om + (True,)


def _exp_vjp(i, g, ans, ins, kw, metas, om):
    return [f"{{o}} = {g} * {ans}"], om + (True,)


def _log_vjp(i, g, ans, ins, kw, metas, om):
    return [f"{{o}} = {g} * (1.0 / {ins[0]})"], om + (True,)


def _sum_vjp(i, g, ans, ins, kw, metas, om):
    shape = metas[0][0]
    if om[1] not in _F or kw.get("axis") is not None or kw.get("keepdims") or math.prod(shape) > 65536:
        return None
    # reductions' _expand: np.full's two steps (a writable array the engine may keep)
    return [f"{{o}} = empty({shape!r}, {om[1].name})", f"{{o}}[...] = {g}"], \
        (shape, om[1], True)


def _mean_vjp(i, g, ans, ins, kw, metas, om):
    shape = metas[0][0]
    if om[1] not in _F or kw.get("axis") is not None or kw.get("keepdims") or \
            math.prod(shape) > 65536:
        return None
    # reductions' _unreduce, / n, then _expand's two steps
    ones = (1,) * len(shape)
    return [f"{{o}} = empty({shape!r}, {om[1].name})",
            f"{{o}}[...] = {g}.reshape({ones!r}) / {math.prod(shape)}"], (shape, om[1], True)


def _permute_vjp(i, g, ans, ins, kw, metas, om):
    dims = tuple(kw["dims"])
    inv = tuple(sorted(range(len(dims)), key=dims.__getitem__))  # (the rule's inverse)
    return [f"{{o}} = {g}.transpose({inv!r})"], metas[0] + (False,)


def _linear_vjp(i, g, ans, ins, kw, metas, om):
    gs = om[0]
    if i == 0:
        if len(gs) <= 2:
            return [f"{{o}} = matmul({g}, {ins[1]})"], metas[0] + (True,)
        return [f"{{o}} = matmul({g}.reshape(-1, {gs[-1]}), {ins[1]}).reshape("
                f"{tuple(gs[:-1]) + (metas[1][0][1],)})"], metas[0] + (False,)
    if i == 1:
        rows_g = g if len(gs) == 2 else f"{g}.reshape(-1, {gs[-1]})"
        xs = metas[0][0]
        rows_x = ins[0] if len(xs) == 2 else f"{ins[0]}.reshape(-1, {xs[-1]})"
        return [f"{{o}} = matmul({rows_g}.T, {rows_x})"], metas[1] + (True,)
    if i == 2:  # the bias: g summed over its leading axes (the sum_over_axes kernel)
        lead = tuple(range(len(gs) - len(metas[2][0])))
        if not lead:
            return [f"{{o}} = {g}"], metas[2] + (False,)
        return [f"{{o}} = sum_to_fwd({g}, axes={lead!r}, shape={tuple(gs[len(lead):])!r})"], \
            metas[2] + (len(metas[2][0]) == 1,)  # (a 1-D sum is a new array: _rowsum.py)
    return None


def _reshape_vjp(i, g, ans, ins, kw, metas, om):
    return [f"{{o}} = {g}.reshape({tuple(metas[0][0])!r})"], metas[0] + (False,)


def _matmul_vjp(i, g, ans, ins, kw, metas, om):
    xs, ys = metas[0][0], metas[1][0]
    if i == 0 and len(ys) == 2 and len(xs) > 1:  # x (..., n, k) @ W (k, m): no promotion
        return [f"{{o}} = matmul({g}, {ins[1]}.T)"], metas[0] + (True,)
    if i == 1 and len(xs) == 2 and len(ys) == 2:
        return [f"{{o}} = matmul({ins[0]}.T, {g})"], metas[1] + (True,)
    return None


def _relu_vjp(i, g, ans, ins, kw, metas, om):
    # the rule's product with the mask, and its select when that product is not finite
    # (an inf/nan gradient at a blocked entry: 0 * inf)
    return [f"{{o}}m = {ans} != 0", f"{{o}} = {g} * {{o}}m",
            f"if not np.isfinite({{o}}.reshape(-1) @ {{o}}.reshape(-1)): "
            f"{{o}} = np.where({{o}}m, {g}, 0.0)"], om + (True,)


def bn_rule(g, ins, kw, metas, saved):
    """batch_norm's fused rule (`_bn_backward`): lines for {dx}, {dw}, {db}."""
    x, w, b = ins
    n, c = metas[0][0][0], kw["correction"]
    C = metas[1][0][0]
    return [f"{{t}}_1 = {g} * {saved['xhat']}",
            "{t}_2 = add_reduce({t}_1, axis=(0,), keepdims=True)",
            f"{{t}}_3 = add_reduce({g}, axis=(0,), keepdims=True)",
            f"{{dx}} = {g} - {{t}}_3 / {n}",
            f"{{dx}} -= {saved['xhat']} * ({{t}}_2 / {n - c})",
            f"{{dx}} *= {saved['invstd']} * {w}.reshape({(1, C)})",
            f"{{dw}} = sum_to_fwd({{t}}_1, axes=(0,), shape={(C,)})",
            f"{{db}} = sum_to_fwd({g}, axes=(0,), shape={(C,)})"]


VJP = {"add": _add_vjp, "sub": _sub_vjp, "mul": _mul_vjp, "tanh": _tanh_vjp,
       "exp": _exp_vjp, "log": _log_vjp, "sum": _sum_vjp, "linear": _linear_vjp,
       "reshape": _reshape_vjp, "matmul": _matmul_vjp, "relu": _relu_vjp,
       "mean": _mean_vjp, "permute": _permute_vjp}


# ---- host steps (array work of the API layer a replay repeats) ---------------------------
def _count_batch(ins):
    return [f"{ins[0]} += 1"]  # BatchNorm's num_batches_tracked, in place (0-d)


def _update_running(ins):
    """BatchNorm's running statistics, in place: `_update_running`'s arithmetic with
    its Python numbers folded (the same doubles)."""
    mean, var, rm, rv, m, n, c = ins
    if not all(type(v) in (int, float) for v in (m, n, c)) or n < 2:
        return None
    out = []
    if rm is not None:
        out += [f"{rm} *= {1 - m!r}", f"{rm} += {m!r} * {mean}.reshape(-1)"]
    if rv is not None:
        out += [f"{{t}} = {var}.reshape(-1) * {(n - c) / (n - 1)!r}", f"{{t}} *= {m!r}",
                f"{rv} *= {1 - m!r}", f"{rv} += {{t}}"]
    return out


def kernels():
    """The entries' own kernels the written-out lines fall back to (ops import late)."""
    from ..ops.registry import OPS
    from ..ops.rules.nn import index_top, _gelu_f32, layer_norm_rows
    from ..ops.rules._gemm import linear_rows
    from ..ops.rules._rowsum import max_last, sum_trailing
    ce = OPS["cross_entropy"]
    return {"ce_fwd": ce.forward, "ce_dx": ce.vjps[0], "index_top": index_top,
            "sum_trailing": sum_trailing, "ng_fwd": OPS["normalized_grad"].forward,
            "gelu_f32": _gelu_f32, "layer_norm_rows": layer_norm_rows, "max_last": max_last,
            "linear_rows": linear_rows}


def host_table():
    """{host function: emitter}: imported when a replay is generated (nn imports late)."""
    from ..nn.functional.normalization import _update_running as ur
    from ..nn.modules.batchnorm import _count_batch as cb
    return {cb: _count_batch, ur: _update_running}
