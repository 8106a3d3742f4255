"""`tg.optim`: optimizers that update parameters from their `.grad` (PyTorch's names,
defaults and numbers), plus `tg.optim.lr_scheduler`."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler"]
