"""pytorch/examples' sequence programs, from running the real programs with `import torch`
resolving to tapegrad: time_sequence_prediction (LSTMCell + LBFGS) and
word_language_model (checkpoint loading with safe globals). Run with torch and with
tapegrad; what they print must agree (tests/_snippets.py). Written for these tests, not
copied.
"""
import io
import math
import warnings

import numpy as np

from _snippets import assert_same_output, fill_parameters


def _time_sequence(torch, print):
    nn = torch.nn

    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1 = nn.LSTMCell(1, 6)
            self.linear = nn.Linear(6, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = torch.zeros(input.size(0), 6, dtype=torch.double)
            c_t = torch.zeros(input.size(0), 6, dtype=torch.double)
            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                output = self.linear(h_t)
                outputs += [output]
            for _ in range(future):
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                output = self.linear(h_t)
                outputs += [output]
            return torch.cat(outputs, dim=1)

    seq = Sequence()
    seq.double()
    fill_parameters(torch, seq)
    waves = np.sin((np.arange(24)[None, :] + np.array([[0], [3], [7], [11]])) / 4.0)
    input, target = torch.from_numpy(waves[1:, :-1]), torch.from_numpy(waves[1:, 1:])
    criterion = nn.MSELoss()
    optimizer = torch.optim.LBFGS(seq.parameters(), lr=0.8)
    for i in range(2):
        print('STEP: ', i)

        def closure():
            optimizer.zero_grad()
            loss = criterion(seq(input), target)
            print('loss:', round(loss.item(), 6))
            loss.backward()
            return loss
        # LBFGS.step reads float(loss) under no_grad: torch does not warn there
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            first = optimizer.step(closure)
        print(type(first).__name__, first.requires_grad,
              [str(w.message).split("\n")[0] for w in caught])
        with torch.no_grad():
            future = 5
            pred = seq(torch.from_numpy(waves[:1, :-1]), future=future)
            loss = criterion(pred[:, :-future], torch.from_numpy(waves[:1, 1:]))
            print('test loss:', round(loss.item(), 6), pred.shape, pred.detach().numpy().dtype)
    print(sorted(optimizer.state_dict()['state'][0]))


def test_time_sequence_prediction_lbfgs():
    import sys

    import tapegrad  # noqa: F401
    # a warning given earlier in this process (torch's is once per process) would hide one
    sys.modules["tapegrad._tensor"]._SCALAR_WARNED.clear()
    assert_same_output(_time_sequence, rtol=1e-3)


def _word_language_model_checkpoint(torch, print):
    nn = torch.nn

    class RNNModel(nn.Module):
        def __init__(self, ntoken, ninp, nhid):
            super().__init__()
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = nn.LSTM(ninp, nhid, 2, dropout=0.0)
            self.decoder = nn.Linear(nhid, ntoken)

        def forward(self, input, hidden):
            output, hidden = self.rnn(self.encoder(input), hidden)
            return torch.nn.functional.log_softmax(self.decoder(output), dim=-1), hidden

    model = RNNModel(12, 5, 4)
    fill_parameters(torch, model)
    buf = io.BytesIO()
    torch.save(model.state_dict(), buf)
    safe = [RNNModel, torch.nn.modules.dropout.Dropout, torch.nn.modules.linear.Linear,
            torch.nn.modules.rnn.GRU, torch.nn.modules.rnn.LSTM, torch.nn.modules.rnn.RNN,
            torch.nn.modules.sparse.Embedding,
            torch.nn.modules.linear.NonDynamicallyQuantizableLinear,
            torch.nn.modules.activation.MultiheadAttention]
    print([c.__name__ for c in safe[3:]], torch.nn.modules.rnn.LSTM is torch.nn.LSTM)
    print(sorted(torch.nn.modules.rnn.__all__))
    print(type(torch.nn.MultiheadAttention(4, 2).out_proj).__name__,
          issubclass(torch.nn.modules.linear.NonDynamicallyQuantizableLinear, nn.Linear),
          "NonDynamicallyQuantizableLinear" in torch.nn.modules.linear.__all__)
    buf.seek(0)
    loaded = RNNModel(12, 5, 4)
    with torch.serialization.safe_globals(safe):
        print(RNNModel in torch.serialization.get_safe_globals())
        loaded.load_state_dict(torch.load(buf))
    print(RNNModel in torch.serialization.get_safe_globals())
    torch.serialization.add_safe_globals([RNNModel])
    print(RNNModel in torch.serialization.get_safe_globals())
    torch.serialization.clear_safe_globals()
    print(RNNModel in torch.serialization.get_safe_globals())
    try:
        torch.serialization.add_safe_globals(5)
    except TypeError as e:
        print(e)
    data = torch.from_numpy(np.arange(24).reshape(6, 4) % 12)
    hidden = (torch.zeros(2, 4, 4), torch.zeros(2, 4, 4))
    output, hidden = loaded(data[:-1], hidden)
    loss = nn.NLLLoss()(output.view(-1, 12), data[1:].reshape(-1))
    loss.backward()
    print(f"{loss.item():5.4f}", f"{math.exp(loss.item()):8.4f}", hidden[0].shape,
          loaded.rnn.weight_hh_l1.grad.norm())


def test_word_language_model_checkpoint_paths():
    assert_same_output(_word_language_model_checkpoint)
