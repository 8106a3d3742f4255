"""Products: matmul, mm, bmm, dot, mv, outer, addmm/addmv/addr/baddbmm/addbmm,
tensordot, einsum, kron, trace, cdist, cosine_similarity. Derivatives: rules/products.py,
rules/einsum.py."""
import builtins

import numpy as np

from .. import dtypes as _dt
from ..core.record import apply
from ..core.tensor_base import TensorBase, like
from . import _args, pointwise as _pointwise, reductions as _reductions, shape as _shape
from .public import public, public_inplace
from .rules import einsum as ES, linalg as LX, products as L


@public
def outer(input, vec2):
    """The outer product of two 1-D tensors: out[i, j] = input[i] * vec2[j] (a composite)."""
    a, b = _args._tensor(input, "outer"), _args._tensor(vec2, "outer")
    if a._data.ndim != 1 or b._data.ndim != 1:
        raise RuntimeError(f"outer: expected 1-D tensors, got shapes {tuple(a._data.shape)} "
                           f"and {tuple(b._data.shape)}")
    return _pointwise.mul(_shape.reshape(a, (-1, 1)), _shape.reshape(b, (1, -1)))


@public(out=True)
def matmul(input, other):
    a, b = _args._tensor(input), _args._tensor(other)
    if a._data.dtype != b._data.dtype:  # torch promotes nothing in a product: it refuses
        _refuse_mixed_dtypes(a, b)
    return apply(L.matmul, a, b)


def _refuse_mixed_dtypes(a, b):
    """torch's refusal of a product of two dtypes (float32 @ float64), its message by rank."""
    da, db = a._data.dtype, b._data.dtype
    if a.ndim == 1 and b.ndim == 1:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_dt.torch_name(da)} and {_dt.torch_name(db)}")
    if a.ndim >= 3 and b.ndim >= 3:
        raise RuntimeError(f"expected scalar type {_dt.torch_name(da)} but found "
                           f"{_dt.torch_name(db)}")
    raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                       f"{_dt.cpp_name(da)} != {_dt.cpp_name(db)}")


def _matmul_of(name, nd, input, mat2):
    """matmul of two `nd`-D tensors (mm: 2, bmm: 3), refusing other ranks by name."""
    if input.ndim != nd or mat2.ndim != nd:
        raise RuntimeError(f"{name}: expected {nd}-D tensors, got shapes {tuple(input.shape)} "
                           f"and {tuple(mat2.shape)}")
    return matmul(input, mat2)


@public(out=True)
def mm(input, mat2):
    return _matmul_of("mm", 2, input, mat2)


@public(out=True)
def bmm(input, mat2):
    return _matmul_of("bmm", 3, input, mat2)


@public
def dot(input, other):
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError("1D tensors expected, but got "
                           f"{input.ndim}D and {other.ndim}D tensors")
    return matmul(input, other)


@public
def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta * input + alpha * (mat1 @ mat2) (input broadcast to the product's shape)."""
    m = mm(mat1, mat2)
    if m._data.dtype.kind in "iu":  # an integer product keeps its dtype (torch)
        beta, alpha = _int_scalar(beta, m._data.dtype.kind), _int_scalar(alpha, m._data.dtype.kind)
    m = m if alpha == 1 else m * alpha
    x = _args._tensor(input, "addmm")
    if beta == 0:  # torch: input's values are ignored (nan/inf do not propagate), its
        # gradient is 0: where() picks the product everywhere
        return _pointwise.where(like(x, np.ones(tuple(m.shape), dtype=bool)), m, x)
    return (x if beta == 1 else x * beta) + m


@public
def mv(input, vec):
    """Matrix-vector product: (n, m) @ (m,) -> (n,)."""
    a, v = _args._tensor(input, "mv"), _args._tensor(vec, "mv")
    if a.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {a.ndim}, "
                           f"{v.ndim}")
    return matmul(a, v)


# ---- einsum ---------------------------------------------------------------------------------
@public(out=True, method=False)
def einsum(equation, *operands):
    """torch.einsum(eq, a, b, ...), einsum(eq, [a, b, ...]) and the sublist form
    einsum(a, [0, 1], b, [1, 2], [0, 2]); ellipsis, implicit output, repeated letters (diagonals) and size-1 broadcasting as in torch."""
    if not isinstance(equation, str):  # the sublist form: einsum(a, [0, 1], b, [1, 2], [0, 2])
        equation, operands = _sublist_equation((equation,) + operands)
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    xs = [_args._tensor(o, "einsum") for o in operands]
    if not xs:
        raise RuntimeError("einsum(): must provide at least one operand")
    eq, specs, _ = ES.normalize(equation, [tuple(x.shape) for x in xs])
    for k, (s, x) in enumerate(zip(specs, xs)):
        for c in set(s):
            sizes = {x.shape[p] for p in builtins.range(len(s)) if s[p] == c}
            if len(sizes) > 1:
                raise RuntimeError(f"einsum(): subscript {c} is repeated for operand {k} but "
                                   f"the sizes don't match, {min(sizes)} != {max(sizes)}")
    kinds = {x.dtype for x in xs}
    if len(kinds) > 1:  # torch: operands must have one dtype
        raise RuntimeError("expected scalar type " + _args._tname(xs[0].dtype) + " but found "
                           + _args._tname(next(d for d in (x.dtype for x in xs) if d != xs[0].dtype)))
    return apply(ES.einsum, *xs, eq=eq)


def _sublist_letters(sub):
    # torch: subscript k in [0, 26) is 'A' + k, in [26, 52) 'a' + k - 26; Ellipsis is '...'
    out = []
    for k in sub:
        if k is Ellipsis:
            out.append("...")
            continue
        if not 0 <= k < 52:
            raise ValueError("einsum(): subscript in subscript list is not within the valid "
                             "range [0, 52)")
        out.append(chr(ord("A") + k) if k < 26 else chr(ord("a") + k - 26))
    return "".join(out)


def _sublist_equation(args):
    """(equation, operands) of einsum(op1, sublist1, op2, sublist2, ..., [sublist_out])."""
    ops, specs = list(args[0::2][:len(args) // 2]), list(args[1::2][:len(args) // 2])
    for o in ops:
        if not isinstance(o, TensorBase):
            raise TypeError(f"einsum(): expected a Tensor operand, got {type(o).__name__}")
    eq = ",".join(_sublist_letters(s) for s in specs)
    if len(args) % 2:  # the output sublist
        eq += "->" + _sublist_letters(args[-1])
    return eq, tuple(ops)


@public
def trace(input):
    """The sum of the main diagonal of a matrix."""
    x = _args._tensor(input, "trace")
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    s = _reductions.sum(apply(LX.diagonal, x, offset=0, dim1=0, dim2=1))
    return s


@public
def kron(input, other):
    """The Kronecker product: out[i*B + k] = a[i] * b[k] in every dim (the shorter shape
    padded with leading 1s); one broadcast product and a reshape."""
    a, b = _args._tensor(input, "kron"), _args._tensor(other, "kron")
    nd = max(a._data.ndim, b._data.ndim)
    sa = (1,) * (nd - a._data.ndim) + tuple(a._data.shape)
    sb = (1,) * (nd - b._data.ndim) + tuple(b._data.shape)
    ea = _shape.reshape(a, tuple(v for s in sa for v in (s, 1)))
    eb = _shape.reshape(b, tuple(v for s in sb for v in (1, s)))
    return _shape.reshape(ea * eb, tuple(x * y for x, y in zip(sa, sb)))


def _add_scaled(name, input, prod, beta, alpha):
    """beta * input + alpha * prod; beta == 0 ignores input's values (nan does not
    propagate), as torch's addmm family does. input must expand to prod's shape."""
    x = _args._tensor(input, name)
    want, have = tuple(prod.shape), tuple(x.shape)
    if have != want:  # input broadcasts one way, to the product's shape
        pad = (1,) * (len(want) - len(have)) + have
        for i, (w, h) in enumerate(zip(want, pad)):
            if len(have) > len(want) or (h != w and h != 1):
                raise RuntimeError(f"The expanded size of the tensor ({w}) must match the "
                                   f"existing size ({h}) at non-singleton dimension {i}.  "
                                   f"Target sizes: {list(want)}.  Tensor sizes: {list(have)}")
    beta, alpha = _integral_scalars(name, x, prod, beta, alpha)
    if prod._data.dtype == np.bool_ and x._data.dtype == np.bool_:  # torch: or / and
        keep = np.broadcast_to(x._data, want) & bool(beta)
        return like(x, keep | (prod._data & bool(alpha)))
    p = prod if alpha == 1 else prod * alpha
    if beta == 0:
        return _pointwise.where(like(x, np.ones(tuple(p.shape), dtype=bool)), p, x)
    return (x if beta == 1 else x * beta) + p


def _integral_scalars(name, x, prod, beta, alpha):
    """torch's integer addmm family keeps the integer dtype: beta and alpha are truncated
    to integers (addr refuses float ones, and a bool beta for a non-bool result)."""
    kind = np.result_type(x._data.dtype, prod._data.dtype).kind
    if kind not in "iu":
        return beta, alpha
    if name == "addr":
        for arg, v in (("beta", beta), ("alpha", alpha)):
            if isinstance(v, float):
                raise RuntimeError(f"For integral input tensors, argument {arg} must not be a "
                                   "floating point number.")
        if isinstance(beta, bool):
            raise RuntimeError("Boolean beta only supported for Boolean results.")
    return _int_scalar(beta, kind), _int_scalar(alpha, kind)


def _int_scalar(v, kind):
    if kind == "u" and isinstance(v, float) and v < 0:  # torch's checked scalar conversion
        raise RuntimeError("value cannot be converted to type uint8_t without overflow")
    return int(v)


@public
def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta * input + alpha * (mat @ vec)."""
    m, v, x = _args._tensor(mat, "addmv", "mat", 2), _args._tensor(vec, "addmv", "vec", 3), _args._tensor(input, "addmv")
    if m.ndim != 2 or v.ndim != 1 or m.shape[1] != v.shape[0] or x.ndim > 1 or (
            x.ndim == 1 and x.shape[0] not in (1, m.shape[0])):
        raise RuntimeError(f"size mismatch, got input ({'x'.join(map(str, x.shape))}), mat "
                           f"({'x'.join(map(str, m.shape))}), vec "
                           f"({'x'.join(map(str, v.shape))})")
    if not x._data.dtype == m._data.dtype == v._data.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{_args._tname(x._data.dtype)}, {_args._tname(m._data.dtype)}, and {_args._tname(v._data.dtype)}")
    return _add_scaled("addmv", x, matmul(m, v), beta, alpha)


@public
def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta * input + alpha * outer(vec1, vec2)."""
    a, b = _args._tensor(vec1, "addr", "vec1", 2), _args._tensor(vec2, "addr", "vec2", 3)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"addr: Expected 1-D argument vec1, but got {a.ndim}-D"
                           if a.ndim != 1 else
                           f"addr: Expected 1-D argument vec2, but got {b.ndim}-D")
    return _add_scaled("addr", input, outer(a, b), beta, alpha)


def _batches(name, input, b1, b2):
    x, a, b = _args._tensor(input, name), _args._tensor(b1, name, "batch1", 2), _args._tensor(b2, name, "batch2", 3)
    if a.ndim != 3 or b.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor" if a.ndim != 3 else
                           "batch2 must be a 3D tensor")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"expected scalar type {_args._tname(a._data.dtype)} but found {_args._tname(b._data.dtype)}")
    if x._data.dtype != a._data.dtype:
        raise RuntimeError(
            f"Input dtypes must be the same, got: input {_args._tname(x._data.dtype).lower()}, batch1: "
            f"{_args._tname(a._data.dtype).lower()}, batch2: {_args._tname(b._data.dtype).lower()}" if name == "baddbmm" else
            f"self and mat2 must have the same dtype, but got {_args._tname(x._data.dtype)} and {_args._tname(a._data.dtype)}")
    return bmm(a, b)


@public
def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * (batch1 @ batch2), batch by batch."""
    return _add_scaled("baddbmm", input, _batches("baddbmm", input, batch1, batch2), beta,
                       alpha)


@public
def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta * input + alpha * sum_b(batch1[b] @ batch2[b])."""
    b = _batches("addbmm", input, batch1, batch2)
    kind = b._data.dtype.kind
    return _add_scaled("addbmm", input,  # an integer sum keeps its dtype here (torch)
                       _reductions.sum(b, 0, dtype=b.dtype if kind in "iu" else None),
                       beta, alpha)


@public(method=False)
def tensordot(a, b, dims=2, out=None):
    """Contract dims `dims` of a with those of b (an int n: a's last n with b's first n; a
    pair of lists; a tensor of either): permute, reshape to matrices, one mm."""
    a, b = _args._tensor(a, "tensordot", "a"), _args._tensor(b, "tensordot", "b", 2)
    if a._data.dtype != b._data.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if isinstance(dims, TensorBase):
        dims = dims._data.tolist()
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > min(a.ndim, b.ndim):
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got "
                               f"dims={dims}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    else:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    da = [_args._dim(d, a.ndim) for d in da]
    db = [_args._dim(d, b.ndim) for d in db]
    for i, j in zip(da, db):
        # a size-1 dim contracts with any size, as torch's: the other is summed over it
        if a.shape[i] == 1 and b.shape[j] != 1:
            b = b.sum(j, keepdim=True, dtype=b.dtype)
        elif b.shape[j] == 1 and a.shape[i] != 1:
            a = a.sum(i, keepdim=True, dtype=a.dtype)
        if a.shape[i] != b.shape[j]:
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} "
                               f"in dim {j}")
    fa = [d for d in range(a.ndim) if d not in da]
    fb = [d for d in range(b.ndim) if d not in db]
    k = int(np.prod([a.shape[d] for d in da]))
    ma = _shape.reshape(_shape.permute(a, fa + da), (-1, k))
    mb = _shape.reshape(_shape.permute(b, db + fb), (k, -1))
    out_shape = tuple(a.shape[d] for d in fa) + tuple(b.shape[d] for d in fb)
    return _shape.reshape(mm(ma, mb), out_shape)


@public
def inner(input, other):
    """Sum over the last dims: a[..., k] b[..., k] -> a.shape[:-1] + b.shape[:-1]; a
    product when either is 0-d."""
    a, b = _args._tensor(input, "inner"), _args._tensor(other, "inner", "other", 2)
    if a.ndim == 0 or b.ndim == 0:
        return _pointwise.mul(a, b)
    if a.shape[-1] != b.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors "
                           f"but got shapes {list(a.shape)} and {list(b.shape)}")
    return tensordot(a, b, ([-1], [-1]))


@public
def vdot(input, other):
    """The dot product of two 1-D tensors of one dtype (real: torch.dot)."""
    a, b = _args._tensor(input, "vdot"), _args._tensor(other, "vdot", "other", 2)
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{_dt.torch_name(a._data.dtype)} and "
                           f"{_dt.torch_name(b._data.dtype)}")
    return dot(a, b)


addmv_ = public_inplace(addmv)
addr_ = public_inplace(addr, function=False)
baddbmm_ = public_inplace(baddbmm, function=False)
addbmm_ = public_inplace(addbmm, function=False)
