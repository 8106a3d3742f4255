"""One timestep of each recurrent cell, and the loop that runs a cell over a sequence.

A step takes `gi` = x_t W_ih^T + b_ih (the input projection, computed for all steps at
once by the caller: one big matmul instead of one per step), the state tuple and the
hidden-side weights, and returns the new state tuple. Gate orders are PyTorch's, so
weights copied from torch mean the same thing:
    LSTM  i, f, g, o          c' = f*c + i*g,  h' = o*tanh(c')  (then h' W_hr^T with proj_size)
    GRU   r, z, n             n = tanh(W_in x + b_in + r*(W_hn h + b_hn)),  h' = (1-z)*n + z*h
    RNN   h' = act(W_ih x + b_ih + W_hh h + b_hh)

Everything is composed of differentiable public ops, so gradients of any order come
from the ordinary engine.
"""
import functools

import numpy as np

from .. import functional as F
from .._public_ops import cat, relu, sigmoid, tanh
from ...core import tape as _tape
from ...core.tensor_base import new_tensor


def rnn_tanh_step(gi, state, w_hh, b_hh):
    (h,) = state
    return (tanh(gi + F.linear(h, w_hh, b_hh)),)


def rnn_relu_step(gi, state, w_hh, b_hh):
    (h,) = state
    return (relu(gi + F.linear(h, w_hh, b_hh)),)


@functools.lru_cache(maxsize=64)
def _lstm_gate_arrays(H, dtype):
    """(scale, shift) over the 4H gate columns: 0.5 / 0.5 on the sigmoid gates i, f, o,
    1 / 0 on the tanh gate g (see lstm_step); read-only, made once per size."""
    half = np.full(H, 0.5, dtype)
    scale = np.concatenate([half, half, np.ones(H, dtype), half])
    shift = np.concatenate([half, half, np.zeros(H, dtype), half])
    scale.flags.writeable = shift.flags.writeable = False
    return scale, shift


def _lstm_gate_consts(H, dtype):
    """The gate constants as tensors, new each call: constants of a tg.compile capture
    (`tape.const`; a tensor kept from an earlier call would be one it cannot see)."""
    return tuple(new_tensor(_tape.const(a)) for a in _lstm_gate_arrays(H, np.dtype(dtype)))


def lstm_step(gi, state, w_hh, b_hh, w_hr=None):
    h, c = state
    H = c.shape[1]
    gates = gi + F.linear(h, w_hh, b_hh)
    # All four activations from ONE tanh over the contiguous gate block, with
    # sigmoid(x) = 0.5 * tanh(0.5 * x) + 0.5 on i, f, o: NumPy's tanh is several times
    # faster than the table's overflow-safe sigmoid (exp, where), and it is 4 ops on one
    # block instead of 4 on strided column slices (measured at word_language_model size:
    # forward 1.7x, forward + backward 1.1x faster).
    scale, shift = _lstm_gate_consts(H, gates.dtype)
    i, f, g, o = (tanh(gates * scale) * scale + shift).split(H, 1)
    c = f * c + i * g
    h = o * tanh(c)
    if w_hr is not None:  # LSTM with projections: the hidden state is h W_hr^T
        h = F.linear(h, w_hr)
    return h, c


def gru_step(gi, state, w_hh, b_hh):
    (h,) = state
    H = h.shape[1]
    i_r, i_z, i_n = gi.split(H, 1)
    # b_hn stays inside the reset gate's product (PyTorch's / cuDNN's GRU variant).
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).split(H, 1)
    r = sigmoid(i_r + h_r)
    z = sigmoid(i_z + h_z)
    n = tanh(i_n + r * h_n)
    return (n + z * (h - n),)  # = (1 - z) * n + z * h, one op fewer


STEPS = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step, "LSTM": lstm_step,
         "GRU": gru_step}


def run_forward(step, gis, state, batch_sizes, weights):
    """Run `step` over steps 0..T-1. gis[t] has batch_sizes[t] rows (decreasing: the
    packed layout); a sequence that has ended leaves the batch with its final state.
    Returns (outputs per step, final state with all rows)."""
    outs, ended = [], []
    for gi, bs in zip(gis, batch_sizes):
        if bs < state[0].shape[0]:  # the last rows' sequences ended at the previous step
            ended.append(tuple(s[bs:] for s in state))
            state = tuple(s[:bs] for s in state)
        state = step(gi, state, *weights)
        outs.append(state[0])
    if ended:  # the later a sequence ended, the lower its rows: undo in reverse order
        state = tuple(cat([s] + [e[k] for e in reversed(ended)]) for k, s in enumerate(state))
    return outs, state


def run_reverse(step, gis, state, batch_sizes, weights):
    """Run `step` over steps T-1..0 (the backward direction). Each sequence starts at its
    own last step from its row of the initial state; rows join as the batch widens."""
    init = state
    state = tuple(s[:batch_sizes[-1]] for s in init)
    outs = [None] * len(gis)
    for t in range(len(gis) - 1, -1, -1):
        bs, have = batch_sizes[t], state[0].shape[0]
        if bs > have:  # sequences whose last step is t start here
            state = tuple(cat([s, s0[have:bs]]) for s, s0 in zip(state, init))
        state = step(gis[t], state, *weights)
        outs[t] = state[0]
    return outs, state
