"""Differentiable collectives, torch.distributed.nn.functional's names.

`all_reduce(tensor, op=ReduceOp.SUM, group=None)` returns a NEW tensor (the input is
left alone) and records a node whose backward is the all-reduce of the incoming
gradient: with y = sum over ranks of x_r on every rank, and each rank's loss depending
on its own y, d(sum of the ranks' losses)/dx_r = sum over ranks of dloss_q/dy. The
same holds for AVG with the 1/world factor. MAX, MIN and PRODUCT are refused: their
gradient is not an all-reduce of the gradient (torch applies the same op anyway).
SyncBatchNorm's statistics go through this function.
"""
from ...autograd import Function
from .. import collectives as _c

__all__ = ["all_reduce"]


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.op, ctx.group = op, group
        out = tensor.detach().clone()
        _c.all_reduce(out, op=op, group=group)
        return out

    @staticmethod
    def backward(ctx, grad_output):
        return None, None, _AllReduce.apply(ctx.op, ctx.group, grad_output)


def all_reduce(tensor, op=_c.ReduceOp.SUM, group=None):
    """The reduction of `tensor` over the ranks of `group`, as a new tensor that
    autograd differentiates (SUM and AVG)."""
    name = str(getattr(op, "name", op)).upper()
    if name not in ("SUM", "AVG"):
        raise NotImplementedError(f"tapegrad.distributed.nn.functional.all_reduce: op {op!r} "
                                  "has no all-reduce gradient; use ReduceOp.SUM or AVG")
    _c._check_tensor(tensor, "all_reduce")
    return _AllReduce.apply(name, group, tensor)
