"""More programs in the style of pytorch/examples, from running the real programs with
`import torch` resolving to tapegrad: time_sequence_prediction (LSTMCell + LBFGS),
word_language_model (checkpoint loading with safe globals), gat (`torch.empty(size=...)`),
dcgan (`torch.backends.cudnn`, `input.is_xpu`), super_resolution (PixelShuffle) and
reinforcement_learning (`torch.distributions.Categorical`). Run with torch and with
tapegrad; what they print must agree (tests/_snippets.py). Written for these tests, not
copied.
"""
import importlib
import io
import math
import warnings

import numpy as np
import pytest

from _snippets import assert_same_output


def _fill(torch, module, scale=0.3):
    """Deterministic parameters (the two libraries' random streams differ)."""
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            vals = np.sin(np.arange(p.numel()) * 0.7 + i).reshape(tuple(p.shape)) * scale
            p.copy_(torch.from_numpy(vals))


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
    _fill(torch, seq)
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
    _fill(torch, model)
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


def _gat_layer(torch, print):
    nn, F = torch.nn, torch.nn.functional
    n_heads, n_hidden, in_features = 2, 3, 4
    W = nn.Parameter(torch.empty(size=(in_features, n_hidden * n_heads)))
    a = nn.Parameter(torch.empty(size=(n_heads, 2 * n_hidden, 1)))
    print(W.shape, a.shape, W.dtype, W.requires_grad)
    with torch.no_grad():
        W.copy_(torch.from_numpy(np.cos(np.arange(24.0)).reshape(4, 6)))
        a.copy_(torch.from_numpy(np.sin(np.arange(12.0)).reshape(2, 6, 1)))
    h = torch.tensor(np.linspace(-1, 1, 20).reshape(5, 4), dtype=torch.float32)
    adj = torch.tensor([[1, 1, 0, 0, 1], [1, 1, 1, 0, 0], [0, 1, 1, 1, 0], [0, 0, 1, 1, 1],
                        [1, 0, 0, 1, 1]])
    ht = torch.mm(h, W).view(5, n_heads, n_hidden).permute(1, 0, 2)
    e = torch.matmul(ht, a[:, :n_hidden, :]) + torch.matmul(ht, a[:, n_hidden:, :]).mT
    e = F.leaky_relu(e, 0.2)
    e = torch.where(adj > 0, e, -9e16 * torch.ones_like(e))
    attention = F.dropout(F.softmax(e, dim=-1), 0.6, training=False)
    out = torch.matmul(attention, ht).mean(dim=0)
    out.sum().backward()
    print(out, W.grad, a.grad.squeeze(-1))
    for make in (torch.zeros, torch.ones, torch.empty, torch.rand, torch.randn):
        print(make(size=(2, 3)).shape, make(size=[4]).shape, make(2, 3).shape)
    try:
        torch.zeros(2, size=(3,))
    except TypeError as e:
        print(e)


def test_gat_layer_empty_size_keyword():
    assert_same_output(_gat_layer)


def _dcgan(torch, print):
    nn = torch.nn
    cudnn = importlib.import_module(torch.__name__ + ".backends.cudnn")
    print(cudnn is torch.backends.cudnn, cudnn.benchmark, cudnn.is_available())
    old = cudnn.benchmark
    cudnn.benchmark = True
    print(torch.backends.cudnn.benchmark)
    cudnn.benchmark = old

    class Discriminator(nn.Module):
        def __init__(self, ngpu):
            super().__init__()
            self.ngpu = ngpu
            self.main = nn.Sequential(
                nn.Conv2d(3, 4, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                nn.Conv2d(4, 8, 4, 2, 1, bias=False), nn.BatchNorm2d(8),
                nn.LeakyReLU(0.2, inplace=True), nn.Conv2d(8, 1, 4, 1, 0, bias=False),
                nn.Sigmoid())

        def forward(self, input):
            if (input.is_cuda or input.is_xpu) and self.ngpu > 1:
                output = nn.parallel.data_parallel(self.main, input, range(self.ngpu))
            else:
                output = self.main(input)
            return output.view(-1, 1).squeeze(1)

    netD = Discriminator(1)
    _fill(torch, netD)
    x = torch.tensor(np.cos(np.arange(2 * 3 * 16 * 16) / 7.0).reshape(2, 3, 16, 16),
                     dtype=torch.float32)
    print(x.is_xpu, x.is_sparse, x.is_quantized, x.is_mkldnn, x.is_nested, x.is_cuda)
    label = torch.full((2,), 1.0, dtype=torch.float)
    output = netD(x)
    errD = nn.BCELoss()(output, label)
    errD.backward()
    print(output, f"{errD.item():.4f}", netD.main[0].weight.grad.norm())


def test_dcgan_backends_and_device_flags():
    assert_same_output(_dcgan)


def _super_resolution(torch, print):
    nn, F = torch.nn, torch.nn.functional

    class Net(nn.Module):
        def __init__(self, upscale_factor):
            super().__init__()
            self.relu = nn.ReLU()
            self.conv1 = nn.Conv2d(1, 4, (3, 3), (1, 1), (1, 1))
            self.conv2 = nn.Conv2d(4, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
            self.pixel_shuffle = nn.PixelShuffle(upscale_factor)

        def forward(self, x):
            return self.pixel_shuffle(self.conv2(self.relu(self.conv1(x))))

    model = Net(upscale_factor=3)
    print(model)
    _fill(torch, model)
    inp = torch.tensor(np.linspace(0, 1, 2 * 25).reshape(2, 1, 5, 5), dtype=torch.float32)
    target = torch.tensor(np.cos(np.arange(2 * 225)).reshape(2, 1, 15, 15),
                          dtype=torch.float32)
    mse = nn.MSELoss()(model(inp), target)
    mse.backward()
    print(f"{mse.item():.6f}", f"{10 * math.log10(1 / mse.item()):.4f} dB",
          model.conv2.weight.grad.sum(), model.conv1.bias.grad)
    for shape, r in [((1, 8, 2, 3), 2), ((2, 3, 9, 1, 2), 3), ((4, 2, 2), 1)]:
        x = torch.tensor(np.arange(np.prod(shape), dtype=np.float64).reshape(shape),
                         requires_grad=True)
        y = F.pixel_shuffle(x, r)
        (y * torch.tensor(np.cos(np.arange(y.numel())).reshape(y.shape))).sum().backward()
        print(y.shape, y.detach(), x.grad)
        print(F.pixel_unshuffle(y, r).shape, torch.equal(F.pixel_unshuffle(y, r), x))
    print(nn.PixelUnshuffle(2), nn.PixelUnshuffle(2)(torch.ones(1, 1, 4, 6)).shape)
    for f, args in [(F.pixel_shuffle, (torch.ones(4, 2), 2)),
                    (F.pixel_shuffle, (torch.ones(5, 2, 2), 2)),
                    (F.pixel_unshuffle, (torch.ones(1, 3, 3), 2)),
                    (F.pixel_unshuffle, (torch.ones(1, 4, 3), 2)),
                    (F.pixel_shuffle, (torch.ones(4, 2, 2), 0))]:
        try:
            f(*args)
        except RuntimeError as e:
            print(e)


def test_super_resolution_pixel_shuffle():
    assert_same_output(_super_resolution)


def _reinforce(torch, print):
    nn, F = torch.nn, torch.nn.functional
    from_dist = importlib.import_module(torch.__name__ + ".distributions")
    Categorical = from_dist.Categorical
    print(Categorical is torch.distributions.Categorical)

    class Policy(nn.Module):
        def __init__(self):
            super().__init__()
            self.affine1 = nn.Linear(4, 8)
            self.affine2 = nn.Linear(8, 2)

        def forward(self, x):
            return F.softmax(self.affine2(F.relu(self.affine1(x))), dim=1)

    policy = Policy()
    _fill(torch, policy)
    saved_log_probs, rewards, entropies = [], [], []
    for t in range(4):
        state = torch.from_numpy(np.cos(np.arange(4.0) + t).astype(np.float32)).unsqueeze(0)
        probs = policy(state)
        m = Categorical(probs)
        print(m)
        sampled = m.sample()
        print(sampled.shape, sampled.dtype, 0 <= sampled.item() < 2, m.batch_shape,
              m.event_shape, m.param_shape)
        action = torch.tensor([t % 2])
        saved_log_probs.append(m.log_prob(action))
        entropies.append(m.entropy())
        print(m, m.probs, m.mode)
        rewards.append(1.0)
    R, returns = 0, []
    for r in rewards[::-1]:
        R = r + 0.99 * R
        returns.insert(0, R)
    returns = torch.tensor(returns)
    eps = np.finfo(np.float32).eps.item()
    returns = (returns - returns.mean()) / (returns.std() + eps)
    policy_loss = [-log_prob * R for log_prob, R in zip(saved_log_probs, returns)]
    loss = torch.cat(policy_loss).sum() - 0.01 * torch.cat(entropies).sum()
    loss.backward()
    print(loss, policy.affine1.weight.grad.norm(), policy.affine2.bias.grad)
    c = Categorical(logits=torch.tensor([[0.2, 0.3, 0.5], [1.0, 2.0, -1.0]]))
    print(c, c.logits, c.log_prob(torch.tensor([1, 2])), c.entropy(), c, c.sample().shape,
          c.sample((5,)).shape, c.enumerate_support())
    print(Categorical(torch.tensor([0.0, 1.0])).entropy(), c.mean, c.variance)
    # validate_args=True given: torch's default is a process-wide switch, and initialising
    # torch._dynamo (any torch.compile in the same test process) turns it off
    for kwargs in ({}, {"probs": torch.tensor([0.5, 0.5]), "logits": torch.tensor([0., 0.])},
                   {"probs": torch.tensor([0.2, -0.3])}):
        try:
            Categorical(**kwargs, validate_args=True)
        except ValueError as e:
            print(e)
    try:
        Categorical(torch.tensor([0.2, 0.8]), validate_args=True).log_prob(torch.tensor(5))
    except ValueError as e:
        print(e)


def test_reinforce_categorical_policy():
    assert_same_output(_reinforce)


@pytest.mark.parametrize("name", ["zeros", "ones", "empty", "rand", "randn"])
def test_size_keyword_matches_torch_signature(name):
    import torch

    import tapegrad
    for lib in (torch, tapegrad):
        assert tuple(getattr(lib, name)(size=(3, 1)).shape) == (3, 1)


@pytest.mark.parametrize("r", [1, 2, 3])
def test_top_level_pixel_shuffle_values_and_gradients(r):
    """torch.pixel_shuffle / torch.pixel_unshuffle (the top-level names), float64, against
    torch: the round trip, and the gradient of a weighted sum through both."""
    import numpy as np
    import torch

    import tapegrad
    rng = np.random.default_rng(r)
    a = rng.standard_normal((2, 3 * r * r, 4, 5))
    w = rng.standard_normal((2, 3, 4 * r, 5 * r))
    got = {}
    for lib in (torch, tapegrad):
        x = lib.tensor(a, requires_grad=True)
        y = lib.pixel_shuffle(x, r)
        z = lib.pixel_unshuffle(y * lib.tensor(w), r)
        z.sum().backward()
        got[lib.__name__] = (y.detach().numpy(), z.detach().numpy(), x.grad.numpy())
    for mine, want in zip(got["tapegrad"], got["torch"]):
        np.testing.assert_array_equal(mine, want)
