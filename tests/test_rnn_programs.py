"""Programs in the style of public PyTorch code that uses recurrent layers, run with
`torch` bound to PyTorch and to tapegrad from identical weights:

- the sequence-models tutorial's LSTM part-of-speech tagger (embedding -> LSTM ->
  linear -> log_softmax, NLLLoss, SGD), and its loop feeding one word at a time;
- word_language_model's RNNModel (LSTM / GRU / RNN_TANH / RNN_RELU) trained with truncated
  backprop: init_hidden, repackage_hidden via .detach(), clip_grad_norm_, manual SGD;
- time_sequence_prediction's two stacked LSTMCells predicting future steps;
- mnist_rnn's LSTM(batch_first) -> last step -> BatchNorm1d -> MLP head.

The model code is written once, as a function of the library (`lib` plays `torch`).
"""
import numpy as np
import pytest
import torch

import tapegrad as tg


def close(a, b, what, rtol=1e-10):
    a = np.asarray(a.data if isinstance(a, tg.Tensor) else a)
    np.testing.assert_allclose(a, b.detach().numpy(), rtol=rtol, atol=1e-12, err_msg=what)


def arr(x):
    return x.detach().numpy() if isinstance(x, torch.Tensor) else np.asarray(x.data)


def copy_weights(src_torch, dst_tg):
    """A real torch state dict into the tapegrad twin, strictly (through numpy)."""
    sd = {k: tg.tensor(v.detach().numpy().copy()) for k, v in src_torch.state_dict().items()}
    dst_tg.load_state_dict(sd, strict=True)


# ---- the sequence-models tutorial: LSTMTagger -----------------------------------------------
def tagger_program(lib):
    nn, F, optim = lib.nn, lib.nn.functional, lib.optim

    class LSTMTagger(nn.Module):
        def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
            super().__init__()
            self.hidden_dim = hidden_dim
            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)
            self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

        def forward(self, sentence):
            embeds = self.word_embeddings(sentence)
            lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
            tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
            return F.log_softmax(tag_space, dim=1)

    data = [("the dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
            ("everybody read that book".split(), ["NN", "V", "DET", "NN"])]
    word_to_ix = {}
    for sent, _ in data:
        for word in sent:
            word_to_ix.setdefault(word, len(word_to_ix))
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2}

    def prepare_sequence(seq, to_ix):
        return lib.tensor([to_ix[w] for w in seq], dtype=lib.long)

    model = LSTMTagger(6, 6, len(word_to_ix), len(tag_to_ix)).double()
    return model, data, word_to_ix, tag_to_ix, prepare_sequence, nn.NLLLoss(), optim


def train_tagger(lib, model, data, word_to_ix, tag_to_ix, prepare_sequence, loss_function,
                 optim, epochs):
    optimizer = optim.SGD(model.parameters(), lr=0.1)
    losses = []
    for _ in range(epochs):
        for sentence, tags in data:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = prepare_sequence(tags, tag_to_ix)
            tag_scores = model(sentence_in)
            loss = loss_function(tag_scores, targets)
            loss.backward()
            optimizer.step()
            losses.append(loss)
    with lib.no_grad():
        scores = model(prepare_sequence(data[0][0], word_to_ix))
    return losses, scores


def test_lstm_tagger_trains_like_torch():
    torch.manual_seed(1)
    th = tagger_program(torch)
    ours = tagger_program(tg)
    copy_weights(th[0], ours[0])
    th_losses, th_scores = train_tagger(torch, *th, epochs=5)
    losses, scores = train_tagger(tg, *ours, epochs=5)
    for k, (a, b) in enumerate(zip(losses, th_losses)):
        close(a, b, f"tagger loss at step {k}")
    close(scores, th_scores, "tag scores after training")
    for (name, p), (_, q) in zip(ours[0].named_parameters(), th[0].named_parameters()):
        close(p, q, f"trained {name}")
    assert list(ours[0].state_dict()) == list(th[0].state_dict())


def test_tutorial_step_by_step_loop_matches_whole_sequence():
    """The tutorial's first example: feed an LSTM one element at a time with the hidden
    state carried over; it equals one call on the whole sequence, as in torch."""
    torch.manual_seed(1)
    lstm_t = torch.nn.LSTM(3, 3).double()
    lstm = tg.nn.LSTM(3, 3, dtype=tg.float64)
    copy_weights(lstm_t, lstm)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((1, 3)) for _ in range(5)]
    h0 = rng.standard_normal((1, 1, 3)), rng.standard_normal((1, 1, 3))
    last = {}
    for lib, mod in ((torch, lstm_t), (tg, lstm)):
        hidden = tuple(lib.tensor(h) for h in h0)
        for i in inputs:
            out, hidden = mod(lib.tensor(i).view(1, 1, -1), hidden)
        whole = lib.cat([lib.tensor(i) for i in inputs]).view(len(inputs), 1, -1)
        out_all, hidden_all = mod(whole, tuple(lib.tensor(h) for h in h0))
        np.testing.assert_allclose(arr(out), arr(out_all)[-1:], rtol=1e-12)
        np.testing.assert_allclose(arr(hidden[1]), arr(hidden_all[1]), rtol=1e-12)
        last[lib] = out, hidden
    close(last[tg][0], last[torch][0], "last output")
    close(last[tg][1][1], last[torch][1][1], "last cell state")


# ---- word_language_model: RNNModel with truncated BPTT --------------------------------------
def lm_program(lib):
    nn, F = lib.nn, lib.nn.functional

    class RNNModel(nn.Module):
        def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5,
                     tie_weights=False):
            super().__init__()
            self.ntoken = ntoken
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            if rnn_type in ["LSTM", "GRU"]:
                self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            else:
                nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
                self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity,
                                  dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)
            if tie_weights:
                self.decoder.weight = self.encoder.weight
            initrange = 0.1
            nn.init.uniform_(self.encoder.weight, -initrange, initrange)
            nn.init.zeros_(self.decoder.bias)
            nn.init.uniform_(self.decoder.weight, -initrange, initrange)
            self.rnn_type, self.nhid, self.nlayers = rnn_type, nhid, nlayers

        def forward(self, input, hidden):
            emb = self.drop(self.encoder(input))
            output, hidden = self.rnn(emb, hidden)
            output = self.drop(output)
            decoded = self.decoder(output).view(-1, self.ntoken)
            return F.log_softmax(decoded, dim=1), hidden

        def init_hidden(self, bsz):
            weight = next(self.parameters())
            # word_language_model writes weight.new_zeros(...): tapegrad's Tensor has no
            # new_zeros yet (a tensor-level gap), so zeros of the weight's dtype instead.
            shape = (self.nlayers, bsz, self.nhid)
            if self.rnn_type == "LSTM":
                return (lib.zeros(*shape, dtype=weight.dtype),
                        lib.zeros(*shape, dtype=weight.dtype))
            return lib.zeros(*shape, dtype=weight.dtype)

    def repackage_hidden(h):
        """Cut the graph between BPTT segments (the example's helper)."""
        if isinstance(h, lib.Tensor):
            return h.detach()
        return tuple(repackage_hidden(v) for v in h)

    def batchify(data, bsz):
        nbatch = data.size(0) // bsz
        data = data.narrow(0, 0, nbatch * bsz)
        return data.view(bsz, -1).t().contiguous()

    def get_batch(source, i, bptt):
        seq_len = min(bptt, len(source) - 1 - i)
        return source[i:i + seq_len], source[i + 1:i + 1 + seq_len].view(-1)

    def train(model, train_data, bptt, lr, clip, batch_size):
        model.train()
        criterion = nn.NLLLoss()
        hidden = model.init_hidden(batch_size)
        losses = []
        for i in range(0, train_data.size(0) - 1, bptt):
            data, targets = get_batch(train_data, i, bptt)
            model.zero_grad()
            hidden = repackage_hidden(hidden)
            output, hidden = model(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), clip)
            # word_language_model: p.data.add_(p.grad, alpha=-lr); tapegrad's .data is
            # the NumPy array, so the same in-place update under no_grad.
            with lib.no_grad():
                for p in model.parameters():
                    p.add_(p.grad, alpha=-lr)
            losses.append(loss.item())
        return losses, hidden

    return RNNModel, batchify, train


@pytest.mark.parametrize("rnn_type", ["LSTM", "GRU", "RNN_TANH", "RNN_RELU"])
def test_word_language_model_trains_like_torch(rnn_type):
    corpus = np.random.default_rng(0).integers(0, 30, 4 * 20 + 1)
    torch.manual_seed(0)
    programs = {lib: lm_program(lib) for lib in (torch, tg)}
    models = {lib: programs[lib][0](rnn_type, 30, 8, 8, 2, dropout=0.0, tie_weights=True)
              .double() for lib in (torch, tg)}
    copy_weights(models[torch], models[tg])
    results = {}
    for lib, (_, batchify, train) in programs.items():
        train_data = batchify(lib.tensor(corpus), 4)
        results[lib] = train(models[lib], train_data, bptt=6, lr=2.0, clip=0.25, batch_size=4)
    (losses, hidden), (th_losses, th_hidden) = results[tg], results[torch]
    np.testing.assert_allclose(losses, th_losses, rtol=1e-10)
    for a, b in zip(hidden if isinstance(hidden, tuple) else (hidden,),
                    th_hidden if isinstance(th_hidden, tuple) else (th_hidden,)):
        close(a, b, f"{rnn_type}: final hidden")
    th_params = dict(models[torch].named_parameters())
    for name, p in models[tg].named_parameters():
        close(p, th_params[name], f"{rnn_type}: trained {name}", rtol=1e-9)


def test_real_torch_lstm_lm_checkpoint_loads_and_matches():
    """A torch LSTM language model's state dict (float32, as saved by the example) loads
    strictly into the tapegrad twin and gives the same log-probabilities."""
    torch.manual_seed(3)
    th_cls, _, _ = lm_program(torch)
    tg_cls, _, _ = lm_program(tg)
    th_model = th_cls("LSTM", 50, 16, 16, 2, dropout=0.2).eval()
    ours = tg_cls("LSTM", 50, 16, 16, 2, dropout=0.2)
    copy_weights(th_model, ours)
    ours.eval()
    tokens = np.random.default_rng(1).integers(0, 50, (7, 3))
    out_t, (h_t, c_t) = th_model(torch.tensor(tokens), th_model.init_hidden(3))
    out, (h, c) = ours(tg.tensor(tokens), ours.init_hidden(3))
    for a, b, what in ((out, out_t, "log-probs"), (h, h_t, "h_n"), (c, c_t, "c_n")):
        np.testing.assert_allclose(a.data, b.detach().numpy(), rtol=1e-4, atol=1e-5,
                                   err_msg=what)


def test_lm_with_dropout_trains_and_keeps_shapes():
    """dropout > 0 (the example's default 0.5): random masks, so only shapes, finiteness
    and the training flag are checked."""
    RNNModel, batchify, train = lm_program(tg)
    model = RNNModel("LSTM", 20, 6, 6, 2, dropout=0.5)
    assert model.rnn.dropout == 0.5
    train_data = batchify(tg.tensor(np.random.default_rng(0).integers(0, 20, 41)), 2)
    losses, (h, c) = train(model, train_data, bptt=5, lr=1.0, clip=0.25, batch_size=2)
    assert model.training and len(losses) == 4 and np.all(np.isfinite(losses))
    assert tuple(h.shape) == (2, 2, 6) and tuple(c.shape) == (2, 2, 6)
    assert not h.requires_grad or h.grad_fn is not None


# ---- time_sequence_prediction: two stacked LSTMCells, predicting the future ----------------
def sine_program(lib):
    nn = lib.nn

    class Sequence(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm1 = nn.LSTMCell(1, 11)
            self.lstm2 = nn.LSTMCell(11, 11)
            self.linear = nn.Linear(11, 1)

        def forward(self, input, future=0):
            outputs = []
            h_t = lib.zeros(input.size(0), 11, dtype=lib.double)
            c_t = lib.zeros(input.size(0), 11, dtype=lib.double)
            h_t2 = lib.zeros(input.size(0), 11, dtype=lib.double)
            c_t2 = lib.zeros(input.size(0), 11, dtype=lib.double)
            for input_t in input.split(1, dim=1):
                h_t, c_t = self.lstm1(input_t, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            for _ in range(future):  # feed the prediction back in
                h_t, c_t = self.lstm1(output, (h_t, c_t))
                h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
                output = self.linear(h_t2)
                outputs += [output]
            return lib.cat(outputs, dim=1)

    return Sequence


def test_time_sequence_prediction_lstm_cells_train_like_torch():
    """The example optimises with LBFGS (not in tapegrad yet: another item of issue 13);
    here SGD steps on the same MSE loss, then a prediction of 5 future steps."""
    t = np.arange(12)[None, :] + 3 * np.arange(4)[:, None]
    data = np.sin(t / 2.0)
    torch.manual_seed(0)
    models = {lib: sine_program(lib)().double() for lib in (torch, tg)}
    copy_weights(models[torch], models[tg])
    out = {}
    for lib, seq in models.items():
        criterion = lib.nn.MSELoss()
        optimizer = lib.optim.SGD(seq.parameters(), lr=0.5)
        inp, target = lib.tensor(data[:, :-1]), lib.tensor(data[:, 1:])
        losses = []
        for _ in range(3):
            optimizer.zero_grad()
            loss = criterion(seq(inp), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        with lib.no_grad():
            pred = seq(inp[:2], future=5)
        out[lib] = losses, pred
    np.testing.assert_allclose(out[tg][0], out[torch][0], rtol=1e-10)
    close(out[tg][1], out[torch][1], "prediction with future=5")
    assert tuple(out[tg][1].shape) == (2, 11 + 5)


# ---- mnist_rnn: LSTM(batch_first) -> last step -> BatchNorm1d -> MLP head -------------------
def mnist_rnn_program(lib):
    nn, F = lib.nn, lib.nn.functional

    class Net(nn.Module):
        def __init__(self, p1=0.25, p2=0.5):
            super().__init__()
            self.rnn = nn.LSTM(input_size=28, hidden_size=16, batch_first=True)
            self.batchnorm = nn.BatchNorm1d(16)
            self.dropout1 = nn.Dropout2d(p1)  # as the example (on a 2-D input: it warns)
            self.dropout2 = nn.Dropout2d(p2)
            self.fc1 = nn.Linear(16, 12)
            self.fc2 = nn.Linear(12, 10)

        def forward(self, input):
            input = input.reshape(-1, 28, 28)
            output, hidden = self.rnn(input)
            output = output[:, -1, :]  # the last step's output
            output = self.batchnorm(output)
            output = self.dropout1(output)
            output = F.relu(self.fc1(output))
            output = self.dropout2(output)
            return F.log_softmax(self.fc2(output), dim=1)

    return Net


@pytest.mark.filterwarnings("ignore:dropout2d")
def test_mnist_rnn_step_matches_torch():
    """Dropout probabilities 0 so the masks cannot differ (the example uses 0.25 / 0.5,
    which only changes which units are dropped)."""
    images = np.random.default_rng(0).standard_normal((6, 1, 28, 28))
    labels = np.array([3, 1, 4, 1, 5, 9])
    torch.manual_seed(0)
    models = {lib: mnist_rnn_program(lib)(0.0, 0.0).double() for lib in (torch, tg)}
    copy_weights(models[torch], models[tg])
    res = {}
    for lib, model in models.items():
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        model.train()
        losses = []
        for _ in range(2):
            optimizer.zero_grad()
            loss = lib.nn.functional.nll_loss(model(lib.tensor(images)), lib.tensor(labels))
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        with lib.no_grad():
            res[lib] = losses, model(lib.tensor(images))
    np.testing.assert_allclose(res[tg][0], res[torch][0], rtol=1e-10)
    close(res[tg][1], res[torch][1], "eval log-probs after 2 steps", rtol=1e-9)
    th_sd = models[torch].state_dict()
    for k, v in models[tg].state_dict().items():  # running stats and weights
        if th_sd[k].dtype.is_floating_point:
            close(v, th_sd[k], f"state {k}", rtol=1e-9)
