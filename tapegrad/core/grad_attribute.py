"""`Tensor.grad`: the accumulated gradient, read through a property that warns as torch
does when it is read on a non-leaf tensor that does not retain its gradient.

The classic mistake it catches: `w = w - lr * w.grad` outside `no_grad` makes `w` a new,
non-leaf tensor; the next step's `w.grad` is None (backward fills only leaves), and the
update fails later with a NoneType error. torch warns at the read; so does tapegrad.
The storage stays TensorBase's `grad` slot (`SLOT`), which autograd itself reads and
writes without the check.
"""
import warnings

from . import tape as _tape
from .hooks import retains_grad
from .state import anywhere
from .tensor_base import TensorBase

__all__ = ["grad", "SLOT", "NON_LEAF_GRAD_WARNING"]

SLOT = TensorBase.grad          # the slot's descriptor: SLOT.__get__(t) reads, no warning
_get, _set = SLOT.__get__, SLOT.__set__

# torch's text (torch adds where in its C++ source the warning was triggered)
NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad "
    "attribute won't be populated during autograd.backward(). If you indeed want the .grad "
    "field to be populated for a non-leaf Tensor, use .retain_grad() on the non-leaf Tensor. "
    "If you access the non-leaf Tensor by mistake, make sure you access the leaf Tensor "
    "instead. See github.com/pytorch/pytorch/pull/30531 for more information.")


def _grad_get(self):
    g = _get(self)
    if g is None and self.grad_fn is not None and not retains_grad(self):
        warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=2)
    if anywhere.tapes:  # tg.compile capturing: the user's read is a step (core/tape.py)
        _tape.grad_read(self, g)
    return g


def _grad_set(self, value):
    if anywhere.tapes:
        _tape.grad_set(self, value)
    _set(self, value)


def _grad_del(self):
    _grad_set(self, None)


grad = property(_grad_get, _grad_set, _grad_del,
                doc="The gradient accumulated by backward (leaves, and tensors that called "
                    "retain_grad()), or None.")
