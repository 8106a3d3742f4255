"""torch.nn.modules.activation: activations and MultiheadAttention (torch keeps it here),
re-exported from tapegrad.nn."""
from ..activation import (ELU, GELU, Hardtanh, LeakyReLU, LogSoftmax, ReLU, ReLU6, Sigmoid, SiLU,
                          Softmax, Softplus, Tanh)
from ..multihead import MultiheadAttention

__all__ = ["ELU", "GELU", "Hardtanh", "LeakyReLU", "LogSoftmax", "MultiheadAttention", "ReLU",
           "ReLU6", "Sigmoid", "SiLU", "Softmax", "Softplus", "Tanh"]
from ..activation2 import __all__ as _more
from ..activation2 import *  # noqa: F401,F403,E402  (GLU, Mish, PReLU, RReLU, ...)

__all__ = __all__ + list(_more)
