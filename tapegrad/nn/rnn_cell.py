"""Single-step recurrent cells `RNNCell`, `LSTMCell`, `GRUCell` (PyTorch's names).

Parameters weight_ih (gates*H, in), weight_hh (gates*H, H), bias_ih, bias_hh (gates*H,)
(None without bias), all U(-1/sqrt(H), 1/sqrt(H)). Input (B, in) or unbatched (in,);
state (B, H) or (H,), zeros when omitted. The arithmetic is the layers' step functions
(nn/rnn_steps.py), so a cell and a one-layer RNN agree exactly.
"""
import math

import numpy as np

from ..ops import creation as _c
from .. import dtypes as _dt
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .rnn_steps import gru_step, lstm_step, rnn_relu_step, rnn_tanh_step

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNNCellBase(Module):
    """The parameters, initialisation, repr and input checks the cells share."""

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        dt = _dt.as_dtype(dtype) or _dt.get_default_dtype()
        self.weight_ih = Parameter(np.empty((num_chunks * hidden_size, input_size), dtype=dt))
        self.weight_hh = Parameter(np.empty((num_chunks * hidden_size, hidden_size), dtype=dt))
        if bias:
            self.bias_ih = Parameter(np.empty((num_chunks * hidden_size,), dtype=dt))
            self.bias_hh = Parameter(np.empty((num_chunks * hidden_size,), dtype=dt))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx, n_states):
        """Check shapes (PyTorch's messages); return the batched input, the state tuple
        (zeros when hx is None) and whether the input was unbatched."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.ndim}D instead")
        states = None
        if hx is not None:
            states = tuple(hx) if n_states == 2 else (hx,)
            if n_states == 2 and len(states) != 2:
                raise RuntimeError(f"lstm_cell expects two hidden states, got {len(states)}")
            for k, s in enumerate(states):
                if s.ndim not in (1, 2):
                    what = f"hx[{k}]" if n_states == 2 else "hidden"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got {s.ndim}D "
                                     "instead")
        unbatched = input.ndim == 1
        if unbatched:
            input = input.unsqueeze(0)
            states = states and tuple(s.unsqueeze(0) for s in states)
        if input.dtype != self.weight_ih.dtype:
            raise ValueError(f"{name} input dtype ({input.dtype}) does not match weight dtype "
                             f"({self.weight_ih.dtype})")
        if input.shape[1] != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                               f"expected {self.input_size}")
        batch = input.shape[0]
        if states is None:
            zeros = _c.zeros(batch, self.hidden_size, dtype=input.dtype)
            states = (zeros,) * n_states
        for k, s in enumerate(states):
            if s.shape[0] != batch:
                raise RuntimeError(f"Input batch size {batch} doesn't match hidden{k} batch "
                                   f"size {s.shape[0]}")
            if s.shape[1] != self.hidden_size:
                raise RuntimeError(f"hidden{k} has inconsistent hidden_size: got "
                                   f"{s.shape[1]}, expected {self.hidden_size}")
        return input, states, unbatched

    def _run(self, step, input, hx, n_states):
        x, states, unbatched = self._prepare(input, hx, n_states)
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        out = step(gi, states, self.weight_hh, self.bias_hh)
        if unbatched:
            out = tuple(s.squeeze(0) for s in out)
        return out if n_states == 2 else out[0]


class RNNCell(RNNCellBase):
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu).
    RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh', device=None, dtype=None)"""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device,
                         dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        steps = {"tanh": rnn_tanh_step, "relu": rnn_relu_step}
        if self.nonlinearity not in steps:  # PyTorch checks this here, not in __init__
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return self._run(steps[self.nonlinearity], input, hx, 1)


class LSTMCell(RNNCellBase):
    """(h', c') from (x, (h, c)) with gates i, f, g, o.
    LSTMCell(input_size, hidden_size, bias=True, device=None, dtype=None)"""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        return self._run(lstm_step, input, hx, 2)


class GRUCell(RNNCellBase):
    """h' from (x, h) with gates r, z, n.
    GRUCell(input_size, hidden_size, bias=True, device=None, dtype=None)"""

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device,
                         dtype=dtype)

    def forward(self, input, hx=None):
        return self._run(gru_step, input, hx, 1)
