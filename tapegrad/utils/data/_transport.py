"""How batches cross from a worker process to the main process: pickled to bytes.

The worker pickles each batch itself (not the queue's background thread), so a batch
that cannot be pickled becomes an error the main process re-raises instead of a silent
hang. Tensors travel as their NumPy array plus the leaf's requires_grad flag: the autograd
history of a non-leaf tensor cannot cross processes (its backward closures do not
pickle), and, as torch, sending one is an error that says to detach() it first.
"""
import io
import pickle

from ..._tensor import Tensor

__all__ = ["dumps", "loads"]


def _rebuild_tensor(array, requires_grad):
    return Tensor._of(array, requires_grad=requires_grad)


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj):
        if isinstance(obj, Tensor):
            if obj.grad_fn is not None:
                raise RuntimeError(
                    "Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                    "since autograd does not support crossing process boundaries. If you "
                    "just want to transfer the data, call detach() on the tensor before "
                    "serializing (e.g., putting it on the queue).")
            if type(obj) is Tensor:
                return _rebuild_tensor, (obj._data, obj.requires_grad)
        return NotImplemented


def dumps(obj):
    buf = io.BytesIO()
    _Pickler(buf, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    return buf.getvalue()


loads = pickle.loads
