"""`linear_rows(x, w, b)`: x @ w^T + b for a matrix of rows, the bias inside the product.

BLAS's gemm computes C <- A B + beta C; NumPy's matmul exposes only beta = 0, so
`x @ w.T + b` is a product and then a pass over the whole output to add b. With the
output filled with b first and gemm run with beta = 1 (SciPy's BLAS wrapper), the
product lands on the bias: on the tiny GPT's (512, 64) @ (64, 256) float32, 163 -> 133
us, (512, 64) @ (64, 192) 122 -> 103 us (1 thread, interleaved, measured). The same
bits as `matmul` then `+= b` when the inner dimension fits one of BLAS's K blocks
(the sums are finished before b is added; checked for K = 64 and 256 with OpenBLAS's
SkylakeX and Haswell kernels); past one block (K = 784) b joins the first block's
partial sums: within rounding. torch's Linear does the same (addmm).

Used for float32/float64 outputs of at least `_MIN_OUT` elements (below, the wrapper's
call costs more than the pass it saves); anything else: matmul, then `+= b`.
"""
import numpy as np

_GEMM = {}
_MIN_OUT = 16384


def _gemm(dtype):
    fn = _GEMM.get(dtype)
    if fn is None:
        from scipy.linalg.blas import get_blas_funcs
        fn = _GEMM[dtype] = get_blas_funcs("gemm", dtype=dtype)
    return fn


def linear_rows(x, w, b=None):
    """x @ w.T (+ b) for a 2-D x (rows), w (N, K), b (N,) or None."""
    m, n = x.shape[0], w.shape[0]
    if (b is None or m * n < _MIN_OUT or x.dtype not in (np.float32, np.float64)
            or w.dtype != x.dtype or b.dtype != x.dtype or b.shape != (n,)
            or x.shape[1] == 0):
        out = np.matmul(x, w.T)
        if b is not None:
            out += b
        return out
    out = np.empty((m, n), dtype=x.dtype)
    np.copyto(out, b)
    # column-major terms: out^T (N, M) = w (N, K) @ x^T (K, M); w.T and x.T are the
    # Fortran-ordered views BLAS takes as they are (others: the wrapper copies them)
    got = _gemm(x.dtype)(1.0, w.T, x.T, beta=1.0, c=out.T, trans_a=1, overwrite_c=1)
    if not np.shares_memory(got, out):  # (the wrapper wrote a copy: never seen)
        out[...] = got.T
    return out
