"""torch.nn.modules.rnn: the recurrent layers and their cells (torch keeps both here),
re-exported from tapegrad.nn. word_language_model lists `torch.nn.modules.rnn.LSTM` among
the safe globals it loads a checkpoint with."""
from ..rnn import GRU, LSTM, RNN, RNNBase
from ..rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]
