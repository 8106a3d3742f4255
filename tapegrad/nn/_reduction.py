"""torch.nn._reduction: the `reduction` argument of the losses, torch's legacy
`size_average` / `reduce` translation and the final mean / sum / none (shared by
`nn/functional/loss.py` and the loss modules of `nn/modules/loss.py`)."""
import warnings

from ..ops import reductions as _reductions

_REDUCTIONS = ("mean", "sum", "none")


def _reduction(reduction, size_average=None, reduce=None):
    if size_average is not None or reduce is not None:  # legacy arguments
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = "none" if not reduce else ("mean" if size_average else "sum")
        # torch warns on every use (the VAE tutorials still pass size_average=False)
        warnings.warn("size_average and reduce args will be deprecated, please use "
                      f"reduction='{reduction}' instead.")
    if reduction not in _REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return _reductions.mean(loss)
    if reduction == "sum":
        return _reductions.sum(loss)
    return loss
