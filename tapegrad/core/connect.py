"""A constant first gradient stays in the graph under create_graph, as torch's does.

The rule of a piecewise op (abs, relu, leaky_relu, hardtanh, max pooling, l1_loss,
nll_loss, ...) multiplies g by a mask or a sign computed from the input's values: a
constant. With a constant incoming g (the seed of `autograd.grad(out.sum(), x,
create_graph=True)`) its result does not require grad, and a gradient penalty through it
(`grad.norm()**2).backward()`) raised "does not require grad". torch's formula for such
an op takes the input (or the output) as an argument, so its result requires grad and
the double backward gives zeros: the derivative of a locally constant mask.

`connect(node, i, gi)` gives such a gradient (of an op listed in PIECEWISE) a node
whose inputs are the gradient and input i: the gradient passes through unchanged, the
input gets zeros. Other constant gradients (add, sum, reshape, a product with a
constant, clamp with numbers, max) stay constant, and a penalty through them raises
as in torch.
"""
from ..ops.registry import Op
from .record import apply
from .tensor_base import TensorBase


def _backward(xp, g, ans, gi, *refs):
    return (g,) + tuple(xp.zeros_like(r) for r in refs)


# not registered in the op table (ops/registry.py OPS): the engine makes it, never a user
constant_grad = Op(
    "constant_grad", lambda gi, *refs: gi, backward=_backward, reads="", promote=False,
    inputs=("gi",),
    text="dgi = g ; dref = 0 (the first gradient of a piecewise op: locally constant)",
    hint=("the derivative of a mask or sign is 0: finite; a non-finite result here means "
          "the incoming gradient already was"),
    node="ConstantGradBackward0")


def connect_all(node, grads):
    """Each input's gradient under create_graph, constant ones connected (below)."""
    return [connect(node, i, gi) for i, gi in enumerate(grads)]


# The table ops whose torch backward takes the input (or output) as a differentiable
# argument although its derivative is a mask: threshold_backward (relu), sgn (abs),
# leaky_relu_backward, hardtanh_backward, max_pool2d_with_indices_backward,
# avg_pool2d_backward, norm_backward (ord 1). Where torch's formula only compares the
# input (clamp with numbers, max/min, amax, maximum, floor) its gradient is a constant
# and a penalty through it raises, in both libraries.
PIECEWISE = frozenset({"abs", "relu", "leaky_relu", "hardtanh", "max_pool2d", "avg_pool2d",
                       "vector_norm"})


def connect(node, i, gi):
    """gi (input i's gradient under create_graph), in the graph of input i when it would
    otherwise be a constant and the op is one of PIECEWISE."""
    if gi is None or (isinstance(gi, TensorBase) and gi._rg) or node.op.name not in PIECEWISE:
        return gi
    x = node.inputs[i]
    if not (isinstance(x, TensorBase) and x._rg):
        return gi
    return apply(constant_grad, gi, x)
