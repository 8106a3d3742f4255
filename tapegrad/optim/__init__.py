"""`tg.optim`: optimizers that update parameters from their `.grad` (PyTorch's names,
defaults and numbers), plus `tg.optim.lr_scheduler`."""
from . import lr_scheduler
from .adam import Adam, AdamW
from .optimizer import Optimizer
from .rmsprop import RMSprop
from .sgd import SGD
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adamax import Adamax
from .nadam import NAdam
from .radam import RAdam
from .lbfgs import LBFGS

__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "RMSprop", "lr_scheduler",
           "Adadelta", "Adagrad", "Adamax", "NAdam", "RAdam", "LBFGS"]
