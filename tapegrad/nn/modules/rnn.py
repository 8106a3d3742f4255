"""torch.nn.modules.rnn: the multi-layer recurrent layers `RNN`, `LSTM`, `GRU` (PyTorch's
`nn.RNNBase` family) and the single-step cells `RNNCell`, `LSTMCell`, `GRUCell`, which
share their step functions (`_rnn_steps.py`), so a cell and a one-layer RNN agree
exactly.

Constructor arguments, parameter names / shapes / registration order, initialisation
U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), state shapes and error messages are
PyTorch's, so state dicts interchange with torch's. Per layer and direction:
    weight_ih_l{k}[_reverse] (gates*H, in)   weight_hh_l{k}[_reverse] (gates*H, H_out)
    bias_ih_l{k}[_reverse]   (gates*H,)      bias_hh_l{k}[_reverse]   (gates*H,)
    weight_hr_l{k}[_reverse] (proj_size, H)  (LSTM with proj_size > 0 only)
with gates = 4 (LSTM), 3 (GRU), 1 (RNN) and H_out = proj_size or hidden_size.

Inputs: (T, B, in) ((B, T, in) if batch_first), unbatched (T, in), or a PackedSequence.
Internally every layer works on packed-layout data (rows of step 0, then step 1, ...):
a padded batch is simply the case where every step has all B rows.
"""
import math
import numbers
import warnings

import numpy as np

from ... import dtypes as _dt
from ..._tensor import Tensor
from .. import functional as F
from .. import init
from .._public_ops import cat, stack
from .module import Module
from ..parameter import Parameter
from ._rnn_steps import (STEPS, gru_step, lstm_step, rnn_relu_step, rnn_tanh_step,
                         run_forward, run_reverse)
from ..utils.rnn import PackedSequence
from ...ops import creation as _creation

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell",
           "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _check_int(value, name):
    if not isinstance(value, int):
        raise TypeError(f"{name} should be of type int, got: {type(value).__name__}")


class RNNBase(Module):
    """What RNN, LSTM and GRU share: the parameters, the checks and the layer loop."""

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        if (not isinstance(dropout, numbers.Number) or isinstance(dropout, bool)
                or not 0 <= dropout <= 1):
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             f"probability of an element being zeroed, got {dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}", stacklevel=2)
        if not isinstance(bias, bool):
            raise TypeError(f"bias should be of type bool, got: {type(bias).__name__}")
        if not isinstance(batch_first, bool):
            raise TypeError(f"batch_first should be of type bool, got: "
                            f"{type(batch_first).__name__}")
        _check_int(input_size, "input_size")
        if input_size <= 0:
            raise ValueError(f"input_size must be greater than zero, got {input_size}")
        _check_int(hidden_size, "hidden_size")
        if hidden_size <= 0:
            raise ValueError(f"hidden_size must be greater than zero, got {hidden_size}")
        _check_int(num_layers, "num_layers")
        if num_layers <= 0:
            raise ValueError(f"num_layers must be greater than zero, got {num_layers}")
        _check_int(proj_size, "proj_size")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             f"projections, got {proj_size}")
        if proj_size >= hidden_size:
            raise ValueError(f"proj_size has to be smaller than hidden_size, got "
                             f"proj_size={proj_size} and hidden_size={hidden_size}")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + str(mode))
        if proj_size and mode != "LSTM":
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        dt = _dt.as_dtype(dtype) or _dt.get_default_dtype()
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size or hidden_size
        directions = 2 if bidirectional else 1
        self._flat_weights_names = []
        self._all_weights = []
        for layer in range(num_layers):
            layer_in = input_size if layer == 0 else real_hidden * directions
            for direction in range(directions):
                sfx = "_reverse" if direction == 1 else ""
                shapes = [(f"weight_ih_l{layer}{sfx}", (gate_size, layer_in)),
                          (f"weight_hh_l{layer}{sfx}", (gate_size, real_hidden))]
                if bias:
                    shapes += [(f"bias_ih_l{layer}{sfx}", (gate_size,)),
                               (f"bias_hh_l{layer}{sfx}", (gate_size,))]
                if proj_size:
                    shapes.append((f"weight_hr_l{layer}{sfx}", (proj_size, hidden_size)))
                for name, shape in shapes:  # registration order = torch's state-dict order
                    setattr(self, name, Parameter(np.empty(shape, dtype=dt)))
                names = [n for n, _ in shapes]
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size)
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self):
        """A no-op, as in PyTorch on CPU (it packs weights for cuDNN)."""

    @property
    def _flat_weights(self):
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    # ---- checks (PyTorch's messages) -----------------------------------------------------
    def _expected_hidden_size(self, batch):
        return (self.num_layers * (2 if self.bidirectional else 1), batch,
                self.proj_size or self.hidden_size)

    def _check_input(self, input, packed):
        wdt = self._flat_weights[0].dtype
        if input.dtype != wdt:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({wdt}). Convert input: input.to({wdt}), or convert model: "
                             f"model.to({input.dtype})")
        expected = 2 if packed else 3
        if input.ndim != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.ndim}")
        if input.shape[-1] != self.input_size:
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.shape[-1]}")

    def _check_hidden(self, hx, expected, what="hidden"):
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(f"Expected {what} size {tuple(expected)}, got {list(hx.shape)}")

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s

    # ---- the computation ---------------------------------------------------------------
    def _layers(self, data, batch_sizes, states):
        """Run all layers on packed-layout `data` (N, in) with per-step `batch_sizes`.
        states: one tuple (h0[, c0]) per (layer, direction), each (B, *). Returns the
        last layer's output (N, D*H_out) and the final state tuples."""
        step = STEPS[self.mode]
        directions = 2 if self.bidirectional else 1
        finals = []
        for layer in range(self.num_layers):
            outs = []
            for d in range(directions):
                names = self._all_weights[layer * directions + d]
                w = {n.split("_l")[0]: getattr(self, n) for n in names}
                # x W_ih^T + b_ih for every step in one matmul, then cut into the steps
                # (the table's split: one node, its backward one concatenation)
                gis = F.linear(data, w["weight_ih"], w.get("bias_ih")).split(
                    [int(n) for n in batch_sizes], 0)
                weights = (w["weight_hh"], w.get("bias_hh"))
                if self.proj_size:
                    weights += (w["weight_hr"],)
                run = run_reverse if d == 1 else run_forward
                steps, final = run(step, gis, states[layer * directions + d], batch_sizes,
                                   weights)
                outs.append(cat(steps))
                finals.append(final)
            data = outs[0] if directions == 1 else cat(outs, 1)
            if self.dropout and self.training and layer < self.num_layers - 1:
                data = F.dropout(data, self.dropout, True)
        return data, finals

    def _zeros_state(self, batch, dtype):
        shape = self._expected_hidden_size(batch)
        h = _creation.zeros(*shape, dtype=dtype)
        if self.mode != "LSTM":
            return h
        return h, _creation.zeros(shape[0], batch, self.hidden_size, dtype=dtype)

    def _check_state(self, hx, batch):
        expected = self._expected_hidden_size(batch)
        if self.mode == "LSTM":
            self._check_hidden(hx[0], expected, "hidden[0]")
            self._check_hidden(hx[1], (expected[0], batch, self.hidden_size), "hidden[1]")
        else:
            self._check_hidden(hx, expected)

    def _check_state_dims(self, hx, want):
        """PyTorch's check that h0 (and c0) have the input's batchedness."""
        name = type(self).__name__
        kind = "batched 3-D" if want == 3 else "unbatched 2-D"
        if self.mode == "LSTM":
            if not isinstance(hx, (tuple, list)) or len(hx) != 2:
                raise TypeError(f"{name}: hx must be a tuple (h_0, c_0), got "
                                f"{type(hx).__name__}")
            if hx[0].ndim != want or hx[1].ndim != want:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but "
                                   f"got ({hx[0].ndim}-D, {hx[1].ndim}-D) tensors")
        elif hx.ndim != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got "
                               f"{hx.ndim}-D tensor")

    def forward(self, input, hx=None):
        lstm = self.mode == "LSTM"
        per_state = (lambda f, s: tuple(f(t) for t in s)) if lstm else (lambda f, s: f(s))
        if isinstance(input, PackedSequence):
            data, batch_sizes, sorted_indices, unsorted_indices = input
            batch_sizes = [int(b) for b in batch_sizes.tolist()]
            batch, unbatched = batch_sizes[0], False
            self._check_input(data, packed=True)
            if hx is None:
                hx = self._zeros_state(batch, data.dtype)
            else:
                self._check_state_dims(hx, 3)
                self._check_state(hx, batch)
                if sorted_indices is not None:  # h0 is given in the user's batch order
                    hx = per_state(lambda t: t.index_select(1, sorted_indices), hx)
        else:
            if not isinstance(input, Tensor):
                raise TypeError(f"{type(self).__name__}: input must be a Tensor or a "
                                f"PackedSequence, got {type(input).__name__}")
            sorted_indices = unsorted_indices = None
            if input.ndim not in (2, 3):
                raise ValueError(f"{type(self).__name__}: Expected input to be 2D or 3D, got "
                                 f"{input.ndim}D tensor instead")
            unbatched = input.ndim == 2
            x = input.unsqueeze(1) if unbatched else (
                input.transpose(0, 1) if self.batch_first else input)
            self._check_input(x, packed=False)
            T, batch = x.shape[0], x.shape[1]
            if T == 0:
                raise RuntimeError("Expected sequence length to be larger than 0 in RNN, got "
                                   f"input of shape {tuple(input.shape)}")
            if hx is None:
                hx = self._zeros_state(batch, x.dtype)
            else:
                self._check_state_dims(hx, 2 if unbatched else 3)
                if unbatched:
                    hx = per_state(lambda t: t.unsqueeze(1), hx)
                self._check_state(hx, batch)
            data, batch_sizes = x.reshape(T * batch, x.shape[2]), [batch] * T
        if lstm:
            states = list(zip(hx[0].unbind(0), hx[1].unbind(0)))
        else:
            states = [(h,) for h in hx.unbind(0)]
        out, finals = self._layers(data, batch_sizes, states)
        h_n = stack([f[0] for f in finals])
        hidden = (h_n, stack([f[1] for f in finals])) if lstm else h_n
        if unsorted_indices is not None:  # back to the user's batch order
            hidden = per_state(lambda t: t.index_select(1, unsorted_indices), hidden)
        if isinstance(input, PackedSequence):
            return PackedSequence(out, input.batch_sizes, sorted_indices, unsorted_indices), hidden
        out = out.reshape(T, batch, out.shape[-1])
        if unbatched:
            return out.squeeze(1), per_state(lambda t: t.squeeze(1), hidden)
        return (out.transpose(0, 1) if self.batch_first else out), hidden


class RNN(RNNBase):
    """Elman RNN: h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu).

    RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
        batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)
    forward(input, h_0=None) -> (output, h_n)
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:  # torch's positional order puts nonlinearity fourth
            nonlinearity, args = args[3], args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        modes = {"tanh": "RNN_TANH", "relu": "RNN_RELU"}
        if nonlinearity not in modes:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(modes[nonlinearity], *args, **kwargs)
        self.nonlinearity = nonlinearity


class LSTM(RNNBase):
    """Long short-term memory, gates i, f, g, o (PyTorch's order); optional projections.

    LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
         bidirectional=False, proj_size=0, device=None, dtype=None)
    forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n))
    """

    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)


class GRU(RNNBase):
    """Gated recurrent unit, gates r, z, n (PyTorch's order and its n-gate variant).

    GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
        bidirectional=False, device=None, dtype=None)
    forward(input, h_0=None) -> (output, h_n)
    """

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


# ---- the single-step cells ------------------------------------------------------------
# Parameters weight_ih (gates*H, in), weight_hh (gates*H, H), bias_ih, bias_hh (gates*H,)
# (None without bias), all U(-1/sqrt(H), 1/sqrt(H)). Input (B, in) or unbatched (in,);
# state (B, H) or (H,), zeros when omitted.
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
            zeros = _creation.zeros(batch, self.hidden_size, dtype=input.dtype)
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
