"""`split_cat(x, sizes, dim)`: `x.split(sizes, dim)` whose backward is ONE `cat`.

The table's `split` makes one `narrow` node per piece, and each piece's gradient is
padded back to x's full shape, then the engine adds them: splitting a sequence into its
T steps costs O(T * x.numel()) in backward. The recurrent layers split every layer's
input projection into steps and every step's gates, so they use this instead (measured:
35 pieces of a 700x800 tensor, forward+backward 35 ms -> 4 ms). A custom Function with
a differentiable backward (`cat`), so double backward still works.
TODO(op owner): make it the `split` table entry's VJP (a cat of the pieces' gradients).
"""
from ..autograd import Function
from ._public_ops import cat


class _SplitCat(Function):
    @staticmethod
    def forward(ctx, x, sizes, dim):
        ctx.dim = dim
        return tuple(x.split(sizes, dim))

    @staticmethod
    def backward(ctx, *grads):  # unused pieces arrive as zeros (materialize_grads)
        return cat(grads, ctx.dim), None, None


def split_cat(x, sizes, dim=0):
    """The pieces of x along dim (sizes: a list of ints), as `Tensor.split` gives them."""
    if len(sizes) == 1:
        return (x,)
    return _SplitCat.apply(x, list(sizes), dim)
