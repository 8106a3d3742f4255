"""Convolution, pooling, im2col and padding primitives: table entries with fused rules.

Layout is PyTorch's NCHW. Everything is vectorised with strided views (im2col) and
matrix products; the only Python loops run over the kh*kw kernel offsets (col2im).

im2col (`unfold`): for kernel (kh, kw), stride s, dilation d, zero padding p, the
window of output pixel (i, j) starts at (i*s_h - p_top, j*s_w - p_left) in the input;
the columns are

    cols[n, (c, a, b), (i, j)] = x_pad[n, c, i*s_h + a*d_h, j*s_w + b*d_w]    # (N, C*kh*kw, L)

conv2d with groups G (Cg = C/G input and Og = O/G output channels per group,
K = Cg*kh*kw):

    y[n, g, o, l] = sum_k W[g, o, k] cols[n, g, k, l] + b[g*Og + o]            # (N, O, OH, OW)

Rules (all three follow from y being bilinear in (x, W)):
    dcols = W^T @ g               then dx = col2im(dcols) = fold (adjoint of unfold)
    dW    = sum_n g[n] @ cols[n]^T
    db    = sum over (n, h, w) of g

The input and weight gradients are table entries of their own
(`conv2d_input_grad`, `conv2d_weight_grad`) whose rules are again the three
convolution maps, so `create_graph=True` (grad of grad) works. The same pattern pairs
every linear op with its adjoint: unfold/fold, avg_pool2d/avg_pool2d_adjoint,
the max-pool scatter/gather, the adaptive average and its adjoint.
(Padding lives in ops/rules/shape.py (`pad`) and ops/shape.py (`F.pad`).)
"""
import numpy as np
from numpy.lib.stride_tricks import as_strided

from ._within_rule import within_rule as _call  # raw under NumPy, recorded otherwise
from ..registry import defop


# ---------------------------------------------------------------------------------------
# geometry
# ---------------------------------------------------------------------------------------

def out_size(n, k, s, p0, p1, d, ceil_mode=False):
    """Output length of a window sweep over n (+p0 before, +p1 after)."""
    span = n + p0 + p1 - d * (k - 1) - 1
    if ceil_mode:
        o = -(-span // s) + 1
        # NOTE: (PyTorch) the last window must start inside the input or left padding.
        if (o - 1) * s >= n + p0:
            o -= 1
    else:
        o = span // s + 1
    return o


def _windows(xp_, kh, kw, sh, sw, dh, dw, oh, ow):
    """Read-only strided view (N, C, kh, kw, OH, OW) of the (already padded) input."""
    N, C = xp_.shape[:2]
    s0, s1, s2, s3 = xp_.strides
    return as_strided(xp_, (N, C, kh, kw, oh, ow), (s0, s1, s2 * dh, s3 * dw, s2 * sh, s3 * sw),
                      writeable=False)


def _zero_pad(x, padding, extra_h=0, extra_w=0):
    (pt, pb), (pl, pr) = padding
    pb += extra_h
    pr += extra_w
    if pt == pb == pl == pr == 0:
        return x
    N, C, H, W = x.shape
    out = np.zeros((N, C, H + pt + pb, W + pl + pr), dtype=x.dtype)
    out[:, :, pt:pt + H, pl:pl + W] = x
    return out


def _geometry(shape, kernel, stride, padding, dilation, ceil_mode=False):
    H, W = shape[-2:]
    (kh, kw), (sh, sw), ((pt, pb), (pl, pr)), (dh, dw) = kernel, stride, padding, dilation
    oh = out_size(H, kh, sh, pt, pb, dh, ceil_mode)
    ow = out_size(W, kw, sw, pl, pr, dw, ceil_mode)
    return oh, ow


def im2col(x, kernel, stride, padding, dilation):
    """(N, C, H, W) -> cols (N, C*kh*kw, OH*OW) (a copy), and (OH, OW)."""
    N, C, H, W = x.shape
    kh, kw = kernel
    oh, ow = _geometry(x.shape, kernel, stride, padding, dilation)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"the kernel {tuple(kernel)} (dilation {tuple(dilation)}) is larger "
                           f"than the padded input {H}x{W} (padding {padding})")
    xpad = _zero_pad(x, padding)
    win = _windows(xpad, kh, kw, stride[0], stride[1], dilation[0], dilation[1], oh, ow)
    return win.reshape(N, C * kh * kw, oh * ow), (oh, ow)


def col2im(cols, shape, kernel, stride, padding, dilation):
    """Adjoint of im2col: sum each column entry back into its input pixel.

    cols (N, C*kh*kw, OH*OW) -> (N, C, H, W). One strided add per kernel offset:
    kh*kw vectorised additions of (N, C, OH, OW) blocks (overlaps accumulate).
    """
    N, C, H, W = shape
    kh, kw = kernel
    (sh, sw), ((pt, pb), (pl, pr)), (dh, dw) = stride, padding, dilation
    oh, ow = _geometry(shape, kernel, stride, padding, dilation)
    c6 = cols.reshape(N, C, kh, kw, oh, ow)
    out = np.zeros((N, C, H + pt + pb, W + pl + pr), dtype=cols.dtype)
    for a in range(kh):
        h0 = a * dh
        hs = slice(h0, h0 + sh * (oh - 1) + 1, sh)
        for b in range(kw):
            w0 = b * dw
            out[:, :, hs, w0:w0 + sw * (ow - 1) + 1:sw] += c6[:, :, a, b]
    if pt or pb or pl or pr:
        out = out[:, :, pt:pt + H, pl:pl + W]
    return out


# ---------------------------------------------------------------------------------------
# unfold / fold
# ---------------------------------------------------------------------------------------

def _unfold_forward(x, kernel, stride, padding, dilation):
    return im2col(x, kernel, stride, padding, dilation)[0]


def _fold_forward(cols, output_size, kernel, stride, padding, dilation):
    N, CK, L = cols.shape
    kh, kw = kernel
    if CK % (kh * kw):
        raise RuntimeError(f"fold: expected size of input's dimension 1 to be divisible by the "
                           f"product of kernel_size, but got input.size(1)={CK} and "
                           f"kernel_size={tuple(kernel)}")
    shape = (N, CK // (kh * kw)) + tuple(output_size)
    oh, ow = _geometry(shape, kernel, stride, padding, dilation)
    if oh * ow != L:
        raise RuntimeError(f"fold: given output_size={tuple(output_size)}, kernel_size="
                           f"{tuple(kernel)}, dilation={tuple(dilation)}, padding={padding}, "
                           f"stride={tuple(stride)}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {oh} * {ow} = "
                           f"{oh * ow}, but got input.size(2)={L}.")
    return col2im(cols, shape, kernel, stride, padding, dilation)


unfold = defop("unfold", _unfold_forward, linear=True, promote=False, vjp=[
    lambda xp, g, ans, x, **kw: _call(xp, fold, g, output_size=tuple(x.shape[-2:]), **kw)],
    text="dx = fold(g): each column entry added back to its pixel (overlaps add)",
    hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is",
    node="Im2ColBackward0")

fold = defop("fold", _fold_forward, linear=True, promote=False, inputs=("cols",), vjp=[
    lambda xp, g, ans, cols, output_size, **kw: _call(xp, unfold, g, **kw)],
    text="dcols = unfold(g)",
    hint="linear: the rule only moves, copies or sums g, so it is finite whenever g is",
    node="Col2ImBackward0")


# ---------------------------------------------------------------------------------------
# conv2d and its two gradient maps
# ---------------------------------------------------------------------------------------

# NOTE (layout): inside conv2d the batch axis is moved LAST, (C, H, W, N). The columns
# are then one (C*kh*kw, OH*OW*N) matrix, so forward, input gradient and weight gradient
# are each a single GEMM, and col2im adds long contiguous runs (ow*N) instead of short
# rows. This was about 2x faster than the (N, C*kh*kw, L) layout on LeNet shapes.

def _batch_last(x, padding):
    """(N, C, H, W) -> zero-padded (C, H + pt + pb, W + pl + pr, N), contiguous."""
    N, C, H, W = x.shape
    (pt, pb), (pl, pr) = padding
    if pt == pb == pl == pr == 0:
        return np.ascontiguousarray(x.transpose(1, 2, 3, 0))
    out = np.zeros((C, H + pt + pb, W + pl + pr, N), dtype=x.dtype)
    out[:, pt:pt + H, pl:pl + W, :] = x.transpose(1, 2, 3, 0)
    return out


def _conv_cols(x, w_shape, stride, padding, dilation, groups):
    """Columns (G, Cg*kh*kw, OH*OW*N) of x, and (OH, OW)."""
    N, C, H, W = x.shape
    O, Cg, kh, kw = w_shape
    oh, ow = _geometry(x.shape, (kh, kw), stride, padding, dilation)
    if oh <= 0 or ow <= 0:
        raise RuntimeError(f"conv2d: calculated padded input size per channel: "
                           f"({H + sum(padding[0])} x {W + sum(padding[1])}). Kernel size: "
                           f"({dilation[0] * (kh - 1) + 1} x {dilation[1] * (kw - 1) + 1}) "
                           "(dilated). Kernel size can't be greater than actual input size")
    xt = _batch_last(x, padding)
    s0, s1, s2, s3 = xt.strides
    (sh, sw), (dh, dw) = stride, dilation
    win = as_strided(xt, (C, kh, kw, oh, ow, N), (s0, s1 * dh, s2 * dw, s1 * sh, s2 * sw, s3),
                     writeable=False)
    return win.reshape(groups, Cg * kh * kw, oh * ow * N), (oh, ow)


def _col2im_batch_last(dcols, x_shape, kernel, stride, padding, dilation, oh, ow):
    """Adjoint of _conv_cols: (C*kh*kw, OH*OW*N) -> (N, C, H, W); overlaps add up."""
    N, C, H, W = x_shape
    kh, kw = kernel
    (sh, sw), ((pt, pb), (pl, pr)), (dh, dw) = stride, padding, dilation
    c6 = dcols.reshape(C, kh, kw, oh, ow, N)
    out = np.zeros((C, H + pt + pb, W + pl + pr, N), dtype=dcols.dtype)
    for a in range(kh):
        hs = slice(a * dh, a * dh + sh * (oh - 1) + 1, sh)
        for b in range(kw):
            out[:, hs, b * dw:b * dw + sw * (ow - 1) + 1:sw] += c6[:, a, b]
    return np.ascontiguousarray(out[:, pt:pt + H, pl:pl + W].transpose(3, 0, 1, 2))


def _check_conv(x, w, b, groups):
    if x.ndim != 4 or w.ndim != 4:
        raise RuntimeError(f"conv2d: expected a 4-D input (N, C, H, W) and a 4-D weight "
                           f"(O, C/groups, kh, kw), got input of shape {tuple(x.shape)} and "
                           f"weight of shape {tuple(w.shape)}")
    O, Cg = w.shape[:2]
    if Cg * groups != x.shape[1]:
        raise RuntimeError(f"conv2d: given groups={groups}, weight of size {tuple(w.shape)}, "
                           f"expected input{tuple(x.shape)} to have {Cg * groups} channels, "
                           f"but got {x.shape[1]} channels instead")
    if O % groups:
        raise RuntimeError(f"conv2d: out_channels ({O}) must be divisible by groups ({groups})")
    if b is not None and tuple(b.shape) != (O,):
        raise RuntimeError(f"conv2d: bias of shape {tuple(b.shape)} does not match the {O} "
                           "output channels of the weight")


def _g_batch_last(g, groups):
    """(N, O, OH, OW) -> (G, Og, OH*OW*N)."""
    N, O = g.shape[:2]
    return np.ascontiguousarray(g.transpose(1, 2, 3, 0)).reshape(groups, O // groups, -1)


def _conv2d_forward(x, w, b=None, *, stride, padding, dilation, groups, cols=None):
    _check_conv(x, w, b, groups)
    if x.dtype != w.dtype:
        raise RuntimeError(f"conv2d: input type ({x.dtype}) and weight type ({w.dtype}) "
                           "should be the same")
    N = x.shape[0]
    O, Cg, kh, kw = w.shape
    cols, (oh, ow) = _conv_cols(x, w.shape, stride, padding, dilation, groups)
    wg = w.reshape(groups, O // groups, Cg * kh * kw)                # (G, Og, K)
    y = np.matmul(wg, cols).reshape(O, oh * ow * N)                   # (O, OH*OW*N)
    if b is not None:
        y += b.reshape(O, 1)
    out = np.ascontiguousarray(y.reshape(O, oh, ow, N).transpose(3, 0, 1, 2))
    # The columns are kept for the weight gradient (im2col is not redone in backward).
    return out, {"cols": cols}


def _conv2d_input_grad_forward(g, w, *, x_shape, stride, padding, dilation, groups,
                               cols=None):
    """dx = col2im(W^T @ g): the transposed convolution of g with W."""
    O, Cg, kh, kw = w.shape
    wg = w.reshape(groups, O // groups, Cg * kh * kw)
    dcols = np.matmul(wg.transpose(0, 2, 1), _g_batch_last(g, groups))   # (G, K, L*N)
    return _col2im_batch_last(dcols, x_shape, (kh, kw), stride, padding, dilation,
                              g.shape[2], g.shape[3])


def _conv2d_weight_grad_forward(x, g, *, w_shape, stride, padding, dilation, groups,
                                cols=None):
    """dW[g] = g[g] @ cols[g]^T, summed over batch and positions by the GEMM."""
    if cols is None:
        cols = _conv_cols(x, w_shape, stride, padding, dilation, groups)[0]
    dw = np.matmul(_g_batch_last(g, groups), cols.transpose(0, 2, 1))   # (G, Og, K)
    return dw.reshape(w_shape)



def _geom_kw(kw):
    return {k: kw[k] for k in ("stride", "padding", "dilation", "groups")}


def _conv_dx(xp, g, ans, x, w, b=None, **kw):
    return _call(xp, conv2d_input_grad, g, w, x_shape=tuple(x.shape), **_geom_kw(kw))


def _conv_dw(xp, g, ans, x, w, b=None, **kw):
    # the forward's columns are passed on: im2col is not redone (x is unchanged, the
    # version check guarantees it); under create_graph the recorded op keeps them too
    return _call(xp, conv2d_weight_grad, x, g, w_shape=tuple(w.shape), cols=kw.get("cols"),
                 **_geom_kw(kw))


def _conv_db(xp, g, ans, x, w, b=None, **kw):
    return xp.sum(g, axis=(0, 2, 3))


def _conv_jvp(xp, t, ans, x, w, b=None, **kw):
    kw = _geom_kw(kw)
    out = 0
    if t[0] is not None:
        out = out + _call(xp, conv2d, t[0], w, **kw)
    if t[1] is not None:
        out = out + _call(xp, conv2d, x, t[1], **kw)
    if len(t) > 2 and t[2] is not None:
        out = out + xp.reshape(t[2], (-1, 1, 1))
    return out


conv2d = defop("conv2d", _conv2d_forward, extra=True, inputs=("input", "weight", "bias"),
               vjp=[_conv_dx, _conv_dw, _conv_db], jvp=_conv_jvp, reads=["input weight", "input weight", ""],
               text="dX = conv_transpose(g, W) ; dW = conv(X, g)",
               hint=("conv2d is linear in each input (dx = conv_transpose(g, W), dW = conv(x, "
                     "g)): finite for finite inputs"),
               node="ConvolutionBackward0")


# d/dg of  dx = D(g, W)  is  conv2d(u, W);  d/dW is  conv2d_weight_grad(u, g).
conv2d_input_grad = defop(
    "conv2d_input_grad", _conv2d_input_grad_forward, inputs=("grad", "weight"),
    vjp=[lambda xp, u, ans, g, w, x_shape, **kw: _call(xp, conv2d, u, w, **kw),
         lambda xp, u, ans, g, w, x_shape, **kw: _call(
             xp, conv2d_weight_grad, u, g, w_shape=tuple(w.shape), **kw)], reads=["weight", "grad weight"],
    text="dgrad = conv2d(g, weight) ; dweight = conv2d_weight_grad(g, grad)",
    hint=("a bilinear map of (grad, weight): its rules are convolutions, finite for finite "
          "inputs"))

# d/dx of  dW = E(x, g)  is  conv2d_input_grad(g, v);  d/dg is  conv2d(x, v).
conv2d_weight_grad = defop(
    "conv2d_weight_grad", _conv2d_weight_grad_forward, inputs=("input", "grad"),
    vjp=[lambda xp, v, ans, x, g, w_shape, **kw: _call(
             xp, conv2d_input_grad, g, v, x_shape=tuple(x.shape), **_geom_kw(kw)),
         lambda xp, v, ans, x, g, w_shape, **kw: _call(xp, conv2d, x, v, **_geom_kw(kw))], reads=["input grad", "input"],
    text="dinput = conv2d_input_grad(grad, g) ; dgrad = conv2d(input, g)",
    hint=("a bilinear map of (input, grad): its rules are convolutions, finite for finite "
          "inputs"))


# ---------------------------------------------------------------------------------------
# max pooling: forward keeps the argmax; backward scatters g to it
# ---------------------------------------------------------------------------------------

def _max_pool2d_forward(x, *, kernel, stride, padding, dilation, ceil_mode, indices=None):
    N, C, H, W = x.shape
    kh, kw = kernel
    (sh, sw), (dh, dw), (ph, pw) = stride, dilation, padding
    oh, ow = _geometry(x.shape, kernel, stride, ((ph, ph), (pw, pw)), dilation, ceil_mode)
    # Right padding large enough for the last (ceil-mode) window; padded cells hold the
    # dtype's lowest value (-inf, or the integer minimum) so they never win (PyTorch never
    # selects padding).
    eh = max(0, (oh - 1) * sh + dh * (kh - 1) + 1 - (H + 2 * ph))
    ew = max(0, (ow - 1) * sw + dw * (kw - 1) + 1 - (W + 2 * pw))
    if ph or pw or eh or ew:
        # padded cells never win: -inf, or the type's minimum for integers
        low = np.iinfo(x.dtype).min if x.dtype.kind in "iub" and x.dtype != bool else -np.inf
        xpad = np.full((N, C, H + 2 * ph + eh, W + 2 * pw + ew), low, dtype=x.dtype)
        xpad[:, :, ph:ph + H, pw:pw + W] = x
    else:
        xpad = x
    # One strided view per kernel offset: the running max is kh*kw elementwise maxima.
    sl = [xpad[:, :, a * dh:a * dh + sh * (oh - 1) + 1:sh, b * dw:b * dw + sw * (ow - 1) + 1:sw]
          for a in range(kh) for b in range(kw)]
    out = sl[0].copy()
    for v in sl[1:]:
        np.maximum(out, v, out=out)
    # The winner: the FIRST offset (row-major over the kernel) equal to the max, as in
    # PyTorch's CPU kernel (it updates only on a strictly greater value).
    # Horner form of "first k with sl[k] == out": a = ne_0 (1 + ne_1 (1 + ... ne_{K-2})),
    # ne_k = (sl[k] != out): two cheap passes per offset, no masked copies.
    K_ = len(sl)
    a = np.zeros(out.shape, dtype=np.uint8 if K_ <= 255 else np.intp)
    if K_ > 1:
        ne = np.empty(out.shape, dtype=np.bool_)
        np.not_equal(sl[K_ - 2], out, out=ne)
        a += ne
        for k in range(K_ - 3, -1, -1):
            a += 1
            np.not_equal(sl[k], out, out=ne)
            a *= ne
    # flat index into H*W = window origin + the winning offset
    origin = ((np.arange(oh) * sh - ph) * W).reshape(oh, 1) + (np.arange(ow) * sw - pw)
    offset = ((np.arange(kh) * dh * W).reshape(kh, 1) + np.arange(kw) * dw).ravel()
    # (a cheap finite-sum test first: the special cases cost a pass only when present)
    if not np.isfinite(out.sum()):
        nan = np.isnan(out)
        if nan.any():
            # NOTE: PyTorch also updates on every NaN, so the LAST NaN of a window wins.
            for k in range(len(sl)):
                np.copyto(a, k, where=nan & np.isnan(sl[k]))
        neg = out == -np.inf
        if neg.any():
            # NOTE: a window whose real cells are all -inf: PyTorch's winner is its first
            # real cell (never padding); a window with no real cell at all (possible with
            # dilation) gets index -1 here and its gradient is dropped.
            fr = _first_inside(oh, sh, ph, dh, kh, H)
            fc = _first_inside(ow, sw, pw, dw, kw, W)
            first = fr.reshape(oh, 1) * kw + fc
            ok = (fr.reshape(oh, 1) >= 0) & (fc >= 0)
            np.copyto(a, np.where(ok, first, 0).astype(a.dtype), where=neg)
            idx = offset[a]
            idx += origin
            idx[neg & ~ok] = -1
            return out, {"indices": idx}
    idx = offset[a]
    idx += origin
    return out, {"indices": idx}


def _first_inside(o, s, p, d, k, n):
    """Per output position along one axis: the first kernel offset landing inside [0, n)
    (-1 if none)."""
    pos = (np.arange(o) * s - p).reshape(o, 1) + np.arange(k) * d       # (o, k)
    inside = (pos >= 0) & (pos < n)
    return np.where(inside.any(1), inside.argmax(1), -1)


def _pool_scatter_forward(g, *, indices, size, unique=False):
    """(N, C, OH, OW) -> (N, C, H, W): add g[n, c, i, j] into position indices[n, c, i, j]."""
    N, C = g.shape[:2]
    H, W = size
    out = np.zeros((N * C, H * W), dtype=g.dtype)
    rows = np.arange(N * C).reshape(-1, 1) * (H * W)
    flat = (indices.reshape(N * C, indices.shape[-2] * indices.shape[-1]) + rows).ravel()
    # Non-overlapping windows hit distinct pixels: plain assignment; otherwise sum with
    # bincount (several windows may pick the same pixel: their gradients add up).
    gf = g.reshape(-1)
    if indices.size and indices.min() < 0:     # windows without a real cell: dropped
        keep = indices.reshape(-1) >= 0
        flat, gf = flat[keep], gf[keep]
    if unique:
        out.reshape(-1)[flat] = gf
    else:
        out = np.bincount(flat, weights=gf, minlength=N * C * H * W).astype(g.dtype)
    return out.reshape(N, C, H, W)


def _disjoint_windows(kernel, stride, dilation):
    """True when no two windows share a pixel (so no two winners can coincide)."""
    return all(s >= d * (k - 1) + 1 for k, s, d in zip(kernel, stride, dilation))


def _pool_gather_forward(x, *, indices, size=None):
    N, C, H, W = x.shape
    L = indices.shape[-2] * indices.shape[-1]
    out = np.take_along_axis(x.reshape(N, C, H * W), np.maximum(indices, 0).reshape(N, C, L),
                             axis=2).reshape(indices.shape)
    if indices.size and indices.min() < 0:
        out[indices < 0] = 0
    return out


pool_scatter = defop("max_pool2d_scatter", _pool_scatter_forward, linear=True, promote=False,
                     vjp=[lambda xp, u, ans, g, indices, size, unique=False: _call(
                         xp, pool_gather, u, indices=indices)],
                     text="dx = g gathered at the saved max positions",
                     hint=("linear: the rule only moves, copies or sums g, so it is finite "
                           "whenever g is"))
pool_gather = defop("max_pool2d_gather", _pool_gather_forward, linear=True, promote=False,
                    vjp=[lambda xp, v, ans, x, indices, size=None: _call(
                        xp, pool_scatter, v, indices=indices, size=tuple(x.shape[-2:]))],
                    text="dx = zeros, g scatter-added at the saved max positions",
                    hint=("linear: the rule only moves, copies or sums g, so it is finite "
                          "whenever g is"),
                    node="MaxPool2DWithIndicesBackward0")

max_pool2d = defop(
    "max_pool2d", _max_pool2d_forward, extra=True, promote=False, vjp=[lambda xp, g, ans, x, indices, **kw: _call(
        xp, pool_scatter, g, indices=indices, size=tuple(x.shape[-2:]),
        unique=_disjoint_windows(kw["kernel"], kw["stride"], kw["dilation"]))],
    jvp=lambda xp, t, ans, x, indices, **kw: _call(xp, pool_gather, t[0], indices=indices), reads=[""],
    text="dx = g routed to each window's max",
    hint=("max_pool2d routes g to each window's maximum (overlapping windows add), never "
          "infinite: a non-finite result here means the incoming gradient already was"),
    node="MaxPool2DWithIndicesBackward0")


# ---------------------------------------------------------------------------------------
# average pooling
# ---------------------------------------------------------------------------------------

def _avg_divisor(n, k, s, p, o, count_include_pad):
    """Per-output window sizes along one axis (the divisor is their outer product)."""
    start = np.arange(o) * s - p
    end = np.minimum(start + k, n + p)
    if not count_include_pad:
        start = np.maximum(start, 0)
        end = np.minimum(end, n)
    return end - start


def _avg_setup(shape, kernel, stride, padding, ceil_mode, count_include_pad, divisor_override):
    H, W = shape[-2:]
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    oh = out_size(H, kh, sh, ph, ph, 1, ceil_mode)
    ow = out_size(W, kw, sw, pw, pw, 1, ceil_mode)
    if divisor_override:
        div = np.full((oh, ow), float(divisor_override))
    else:
        div = np.outer(_avg_divisor(H, kh, sh, ph, oh, count_include_pad),
                       _avg_divisor(W, kw, sw, pw, ow, count_include_pad)).astype(float)
    eh = max(0, (oh - 1) * sh + kh - (H + 2 * ph))
    ew = max(0, (ow - 1) * sw + kw - (W + 2 * pw))
    return oh, ow, div, ((ph, ph + eh), (pw, pw + ew))


def _avg_pool2d_forward(x, *, kernel, stride, padding, ceil_mode, count_include_pad,
                        divisor_override):
    N, C = x.shape[:2]
    (kh, kw), (sh, sw) = kernel, stride
    oh, ow, div, pads = _avg_setup(x.shape, kernel, stride, padding, ceil_mode,
                                   count_include_pad, divisor_override)
    xpad = _zero_pad(x, pads)
    integer = x.dtype.kind in "iu"
    # integers: torch sums in int64 and divides truncating toward zero
    out = np.zeros((N, C, oh, ow), dtype=np.int64 if integer else x.dtype)
    for a in range(kh):
        for b in range(kw):
            out += xpad[:, :, a:a + sh * (oh - 1) + 1:sh, b:b + sw * (ow - 1) + 1:sw]
    if integer:
        d = div.astype(np.int64)
        return (np.sign(out) * np.sign(d) * (np.abs(out) // np.abs(d))).astype(x.dtype)
    out /= div.astype(x.dtype)
    return out


def _avg_pool2d_adjoint_forward(g, *, x_shape, kernel, stride, padding, ceil_mode,
                                count_include_pad, divisor_override):
    N, C, H, W = x_shape
    (kh, kw), (sh, sw) = kernel, stride
    oh, ow, div, ((pt, pb), (pl, pr)) = _avg_setup(x_shape, kernel, stride, padding, ceil_mode,
                                                   count_include_pad, divisor_override)
    gd = g / div.astype(g.dtype)
    out = np.zeros((N, C, H + pt + pb, W + pl + pr), dtype=g.dtype)
    for a in range(kh):
        for b in range(kw):
            out[:, :, a:a + sh * (oh - 1) + 1:sh, b:b + sw * (ow - 1) + 1:sw] += gd
    return out[:, :, pt:pt + H, pl:pl + W]


avg_pool2d = defop("avg_pool2d", _avg_pool2d_forward, linear=True, promote=False, opmath=True, vjp=[
    lambda xp, g, ans, x, **kw: _call(xp, avg_pool2d_adjoint, g, x_shape=tuple(x.shape), **kw)],
    text="dx = g/k^2 spread over each window",
    hint=("avg_pool2d spreads g divided by each window's size over the window: finite whenever"
          " the incoming gradient is"),
    node="AvgPool2DBackward0")
avg_pool2d_adjoint = defop(
    "avg_pool2d_adjoint", _avg_pool2d_adjoint_forward, linear=True, promote=False, opmath=True,
    inputs=("grad",),
    vjp=[lambda xp, u, ans, g, x_shape, **kw: _call(xp, avg_pool2d, u, **kw)],
    text="dgrad = avg_pool2d(g)",
    hint=("the adjoint's rule is avg_pool2d (window averages): finite whenever the incoming "
          "gradient is"))


# ---------------------------------------------------------------------------------------
# adaptive average pooling: y = P_h @ x @ P_w^T with averaging matrices
# ---------------------------------------------------------------------------------------

def adaptive_matrix(n, o, dtype):
    """(o, n) averaging matrix: row i averages x[floor(i*n/o) : ceil((i+1)*n/o)]."""
    i = np.arange(o)
    start = (i * n) // o
    end = -((-(i + 1) * n) // o)
    j = np.arange(n)
    m = (j >= start[:, None]) & (j < end[:, None])
    return (m / (end - start)[:, None]).astype(dtype)


def _adaptive_forward(x, *, output_size):
    H, W = x.shape[-2:]
    oh, ow = output_size
    if oh == 1 and ow == 1:
        return x.mean(axis=(-2, -1), keepdims=True)
    ph = adaptive_matrix(H, oh, x.dtype)
    pw = adaptive_matrix(W, ow, x.dtype)
    return np.matmul(np.matmul(ph, x), pw.T)


def _adaptive_adjoint_forward(g, *, x_size, output_size=None):
    H, W = x_size
    oh, ow = g.shape[-2:]
    ph = adaptive_matrix(H, oh, g.dtype)
    pw = adaptive_matrix(W, ow, g.dtype)
    return np.matmul(np.matmul(ph.T, g), pw)


def _adaptive_avg_pool2d_node(node):
    size = node.args.get("output_size")
    return "MeanBackward1" if tuple(size or ()) == (1, 1) else "AdaptiveAvgPool2DBackward0"


adaptive_avg_pool2d = defop(
    "adaptive_avg_pool2d", _adaptive_forward, linear=True, promote=False, opmath=True,
    vjp=[lambda xp, g, ans, x, output_size: _call(
        xp, adaptive_avg_pool2d_adjoint, g, x_size=tuple(x.shape[-2:]))],
    text="dx = g/|window| spread over each adaptive window",
    hint=("adaptive_avg_pool2d spreads g divided by each window's size over the window: finite"
          " whenever the incoming gradient is"),
    node=_adaptive_avg_pool2d_node)
adaptive_avg_pool2d_adjoint = defop(
    "adaptive_avg_pool2d_adjoint", _adaptive_adjoint_forward, linear=True, promote=False, opmath=True,
    inputs=("grad",),
    vjp=[lambda xp, u, ans, g, x_size, output_size=None: _call(
        xp, adaptive_avg_pool2d, u, output_size=tuple(g.shape[-2:]))],
    text="dgrad = adaptive_avg_pool2d(g)",
    hint=("the adjoint's rule is adaptive_avg_pool2d (window averages): finite whenever the "
          "incoming gradient is"))
