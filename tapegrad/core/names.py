"""PyTorch's names for the nodes of a graph: `grad_fn=<MulBackward0>` in a tensor's repr.

`NODE_NAMES` maps a table op name (ops/*.py) to the class name torch gives the node
that records the same operation. Where torch picks different nodes for one tapegrad op
depending on its arguments (`x.sum()` SumBackward0, `x.sum(1)` SumBackward1; `1 - x`
RsubBackward1; matmul by the operands' dims), `node_name` decides from the node's
inputs and arguments. Ops without a torch counterpart get `<CamelCase>Backward0`;
custom Functions are already named `<Class>Backward`, as in torch.

Two approximations, since the table records one op for several torch calls: a swap of
two dims prints TransposeBackward0 (also for `x.T` / `x.t()`, which torch names
PermuteBackward0 / TBackward0), and `x.amax()` over all dims prints MaxBackward1 (the
node of the far more common `x.max()`).
"""
import numpy as np

from .tensor_base import TensorBase

NODE_NAMES = {
    "abs": "AbsBackward0", "add": "AddBackward0", "alias": "AliasBackward0",
    "avg_pool2d": "AvgPool2DBackward0",
    "batch_norm": "NativeBatchNormBackward0",
    "binary_cross_entropy": "BinaryCrossEntropyBackward0",
    "binary_cross_entropy_with_logits": "BinaryCrossEntropyWithLogitsBackward0",
    "binary_cross_entropy_with_logits_pos_weight": "BinaryCrossEntropyWithLogitsBackward0",
    "cast": "ToCopyBackward0", "cat": "CatBackward0", "clamp": "ClampBackward1",
    "clone": "CloneBackward0", "conv2d": "ConvolutionBackward0", "cos": "CosBackward0",
    "cross_entropy": "NllLossBackward0", "dropout": "MulBackward0",
    "embedding": "EmbeddingBackward0", "exp": "ExpBackward0", "expand": "ExpandBackward0",
    "flatten": "ViewBackward0", "flip": "FlipBackward0", "fold": "Col2ImBackward0",
    "gather": "GatherBackward0", "gelu": "GeluBackward0",
    "gelu_backward": "GeluBackwardBackward0", "index_add": "IndexAddBackward0",
    "index_select": "IndexSelectBackward0", "layer_norm": "NativeLayerNormBackward0",
    "leaky_relu": "LeakyReluBackward0", "log": "LogBackward0",
    "log_softmax": "LogSoftmaxBackward0", "logsumexp": "LogsumexpBackward0",
    "log1p": "Log1PBackward0", "masked_fill": "MaskedFillBackward0", "max_dim": "MaxBackward0", "max": "MaxBackward1",
    "min": "MinBackward1",
    "max_pool2d": "MaxPool2DWithIndicesBackward0",
    "max_pool2d_gather": "MaxPool2DWithIndicesBackward0",
    "maximum": "MaximumBackward0", "min_dim": "MinBackward0", "minimum": "MinimumBackward0",
    "mul": "MulBackward0", "narrow": "SliceBackward0", "neg": "NegBackward0",
    "nll_loss": "NllLossBackward0", "pad": "ConstantPadNdBackward0",
    "relu": "ReluBackward0", "repeat": "RepeatBackward0", "reshape": "ViewBackward0",
    "roll": "RollBackward0", "rsqrt": "RsqrtBackward0", "scatter": "ScatterBackward0",
    "scatter_add": "ScatterAddBackward0", "select": "SelectBackward0",
    "setitem": "CopySlices", "sigmoid": "SigmoidBackward0", "sign": "SignBackward0",
    "sin": "SinBackward0", "softmax": "SoftmaxBackward0", "sqrt": "SqrtBackward0",
    "stack": "StackBackward0", "std": "StdBackward0", "tanh": "TanhBackward0",
    "tril": "TrilBackward0", "triu": "TriuBackward0", "unflatten": "ViewBackward0",
    "unfold": "Im2ColBackward0", "unsqueeze": "UnsqueezeBackward0", "var": "VarBackward0",
    "where": "WhereBackward0", "checkpoint": "CheckpointFunctionBackward",
}
# norms and diagonals: torch's nodes for linalg.vector_norm, svdvals, diag_embed
NODE_NAMES.update(vector_norm="LinalgVectorNormBackward0", svdvals="LinalgSvdBackward0",
                  diagonal_backward="DiagEmbedBackward0")


def _is_tensor(x):
    return isinstance(x, TensorBase)


def _reduction(base):
    return lambda node: base + ("0" if node.args.get("axis") is None else "1")


def _sub(node):
    return "SubBackward0" if _is_tensor(node.inputs[0]) else "RsubBackward1"


def _div(node):
    # torch computes number / tensor as number * reciprocal(tensor)
    return "DivBackward0" if _is_tensor(node.inputs[0]) else "MulBackward0"


def _pow(node):
    base, exp = node.inputs[0], node.inputs[1]
    if not _is_tensor(base):
        return "PowBackward2"
    return "PowBackward1" if _is_tensor(exp) else "PowBackward0"


def _matmul(node):
    a, b = (np.ndim(t._data) for t in node.inputs[:2])
    return {(2, 2): "MmBackward0", (2, 1): "MvBackward0", (1, 1): "DotBackward0",
            (1, 2): "SqueezeBackward4"}.get((a, b), "UnsafeViewBackward0")


def _amax(node):
    return "MaxBackward1" if node.args.get("axis") is None else "AmaxBackward0"


def _amin(node):
    return "MinBackward1" if node.args.get("axis") is None else "AminBackward0"


def _permute(node):
    dims = node.args.get("dims", ())
    moved = [i for i, d in enumerate(dims) if d != i]
    return "TransposeBackward0" if len(moved) == 2 else "PermuteBackward0"


def _squeeze(node):
    axis = node.args.get("axis")
    return "SqueezeBackward1" if isinstance(axis, int) or len(axis or ()) == 1 \
        else "SqueezeBackward0"


def _getitem(node):
    # torch indexes left to right; the node is that of the last step that did something
    key = node.args.get("key")
    parts = key if isinstance(key, tuple) else (key,)
    last = "AliasBackward0"
    for k in parts:
        if isinstance(k, (bool, np.bool_)) or isinstance(k, (np.ndarray, list, TensorBase)):
            return "IndexBackward0"
        if isinstance(k, (int, np.integer)):
            last = "SelectBackward0"
        elif k is None:
            last = "UnsqueezeBackward0"
        elif isinstance(k, slice):
            last = "SliceBackward0"
    return last


def _linear(node):
    x, bias = node.inputs[0], node.inputs[2] if len(node.inputs) > 2 else None
    nd = np.ndim(x._data)
    if nd == 2:
        return "AddmmBackward0" if bias is not None else "MmBackward0"
    return "ViewBackward0" if bias is not None else "UnsafeViewBackward0"


def _adaptive_avg_pool2d(node):
    size = node.args.get("output_size")
    return "MeanBackward1" if tuple(size or ()) == (1, 1) else "AdaptiveAvgPool2DBackward0"


def _sdpa(node):
    q = node.inputs[0]
    if np.ndim(q._data) == 4:
        return "ScaledDotProductFlashAttentionForCpuBackward0"
    return "UnsafeViewBackward0"


_BY_ARGS = {
    "sum": _reduction("SumBackward"), "mean": _reduction("MeanBackward"),
    "prod": _reduction("ProdBackward"), "sub": _sub, "div": _div, "pow": _pow,
    "matmul": _matmul, "amax": _amax, "amin": _amin, "permute": _permute, "squeeze": _squeeze,
    "getitem": _getitem, "linear": _linear, "adaptive_avg_pool2d": _adaptive_avg_pool2d,
    "scaled_dot_product_attention": _sdpa,
}


def _camel(name):
    return "".join(w[:1].upper() + w[1:] for w in name.split("_"))


def node_name(node):
    """Torch's class name for the node that records `node`'s operation."""
    name = node.op.name
    rule = _BY_ARGS.get(name)
    if rule is not None:
        # backward (without retain_graph) frees `inputs` but keeps `args`: rules that read
        # only the arguments (sum(1) is SumBackward1) still answer; the others raise
        # TypeError on None and fall through, as for an unusual argument
        try:
            return rule(node)
        except (AttributeError, IndexError, TypeError):
            pass  # an unusual argument: fall through to the fixed name
    if name in NODE_NAMES:
        return NODE_NAMES[name]
    if name.endswith("Backward"):
        return name
    return _camel(name) + "Backward0"
