"""`tapegrad.sparse` (torch.sparse) and sparse COO tensors as a dense stand-in.

tapegrad has no sparse layouts (docs/differences.md says why): a "sparse" tensor here is
a dense tensor of the class `SparseCOOTensor`, which answers torch's sparse API
(`is_sparse`, `indices()`, `values()`, `_nnz()`, `coalesce()`, `to_dense()`,
`sparse_dim()`, `dense_dim()`) from its dense values, so code written for torch's COO
tensors (a GCN's adjacency matrix: `adj.to_sparse()`, `torch.sparse.mm(adj, x)`) runs and
gives torch's numbers; only the memory and speed of a sparse layout are missing. The
indices are those of the nonzero entries in row-major order, as torch's coalesced
tensor lists them; an explicit zero given to `sparse_coo_tensor` is not kept. Ops on a
SparseCOOTensor give ordinary dense tensors, and gradients flow through all of it
(`sparse.mm` keeps a sparse operand's gradient to its nonzero pattern, as torch does).
"""
from ._tensor import Tensor
from .ops import creation as _creation
from .ops import products as _products

__all__ = ["SparseCOOTensor", "to_sparse", "sparse_coo_tensor", "mm", "spmm", "addmm"]


class SparseCOOTensor(Tensor, keep_type=False):
    """A dense tensor standing in for torch's sparse COO tensor (module docstring)."""

    __slots__ = ()
    is_sparse = True
    _sparse_ndim = None  # None: every dimension is sparse; else a hybrid tensor's count

    def sparse_dim(self):
        return self.dim() if self._sparse_ndim is None else self._sparse_ndim

    def dense_dim(self):
        return self.dim() - self.sparse_dim()

    def _mask(self):
        nz = self.detach() != 0
        if self.dense_dim():  # a hybrid tensor: an entry is a block of the dense dims
            nz = nz.flatten(self.sparse_dim()).any(-1)
        return nz

    def indices(self):
        """(sparse_dim, nnz) int64 coordinates of the nonzero entries, row-major."""
        return self._mask().nonzero().t()

    _indices = indices

    def values(self):
        """The nonzero entries (nnz, *dense dims), differentiable as torch's."""
        return Tensor.__getitem__(self, self._mask())

    _values = values

    def _nnz(self):
        return int(self._mask().sum())

    def coalesce(self):
        return self

    def is_coalesced(self):
        return True

    def to_dense(self, dtype=None, *, masked_grad=None):
        out = Tensor.clone(self)  # a plain Tensor: results are not sparse
        return out if dtype is None else out.to(dtype)

    def to_sparse(self, sparse_dim=None):
        return self if sparse_dim in (None, self.sparse_dim()) else \
            to_sparse(self, sparse_dim)

    def __repr__(self):
        return (f"tensor(indices={self.indices()!r},\n       values={self.values()!r},\n"
                f"       size={tuple(self.shape)}, nnz={self._nnz()}, layout=torch.sparse_coo)")


_HYBRID = {}


def _as_sparse(dense, sparse_dim=None):
    # a fresh result of a recorded op, so retyping it in place keeps its graph; a hybrid
    # tensor's class records its sparse_dim (the instances have no room for it)
    cls = SparseCOOTensor
    if sparse_dim is not None and sparse_dim != dense.dim():
        cls = _HYBRID.get(sparse_dim)
        if cls is None:
            cls = _HYBRID[sparse_dim] = type("SparseCOOTensor", (SparseCOOTensor,),
                                             {"__slots__": (), "_sparse_ndim": sparse_dim})
    dense.__class__ = cls
    return dense


def to_sparse(self, sparse_dim=None):
    """`Tensor.to_sparse()`: the same values as a SparseCOOTensor (a differentiable copy)."""
    if sparse_dim is not None and not 0 < sparse_dim <= self.dim():
        raise RuntimeError(f"sparse_dim must be in [1, {self.dim()}], got {sparse_dim}")
    return _as_sparse(Tensor.clone(self), sparse_dim)


# The Tensor method: set here, where its result's class is, and not in _tensor.py, which
# this module imports (tapegrad/__init__.py imports this module).
Tensor.to_sparse = to_sparse


def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """torch.sparse_coo_tensor: `values[k]` at `indices[:, k]`, repeated ones summed."""
    indices = indices if isinstance(indices, Tensor) else _creation.tensor(indices)
    values = values if isinstance(values, Tensor) else _creation.tensor(values, dtype=dtype)
    if indices.dim() != 2 or indices.shape[1] != values.shape[0]:
        raise RuntimeError(f"indices and values must have the same number of elements, "
                           f"got indices {tuple(indices.shape)} and values "
                           f"{tuple(values.shape)}")
    if values.dim() != 1:
        raise NotImplementedError("sparse_coo_tensor with dense dimensions (values of "
                                  "dim > 1) is not supported by tapegrad's dense stand-in")
    if size is None:
        size = [int(m) + 1 for m in indices.amax(1).tolist()] if indices.shape[1] else \
            [0] * indices.shape[0]
    if dtype is not None:
        values = values.to(dtype)
    dense = _creation.zeros(tuple(size), dtype=values.dtype)
    dense = dense.index_put(tuple(indices), values, accumulate=True)
    if requires_grad:
        dense = dense.detach().requires_grad_(True)
    return _as_sparse(dense)


def _pattern_grad(t):
    """`t` with the same values, whose gradient is kept only where `t` is nonzero: the
    gradient torch's sparse.mm gives a sparse operand has the operand's pattern."""
    if not getattr(t, "is_sparse", False) or not t.requires_grad:
        return t
    return t * (t.detach() != 0).to(t.dtype)


def mm(mat1, mat2, reduce="sum"):
    """torch.sparse.mm: a (sparse) matrix times a (sparse or dense) matrix."""
    if reduce != "sum":
        raise NotImplementedError("torch.sparse.mm with reduce other than 'sum' is not "
                                  "supported by tapegrad")
    out = _products.mm(_pattern_grad(mat1), _pattern_grad(mat2))
    # sparse @ sparse is sparse in torch; sparse @ dense is dense
    return _as_sparse(out) if getattr(mat2, "is_sparse", False) else out


def spmm(input, mat2):
    """torch.spmm: input @ mat2; unlike sparse.mm, the gradient of a sparse `input` is
    dense (torch's)."""
    out = _products.mm(input, mat2)
    return _as_sparse(out) if getattr(mat2, "is_sparse", False) else out


def addmm(mat, mat1, mat2, *, beta=1.0, alpha=1.0):
    """torch.sparse.addmm: beta * mat + alpha * (mat1 @ mat2)."""
    return _products.addmm(mat, mat1, mat2, beta=beta, alpha=alpha)
