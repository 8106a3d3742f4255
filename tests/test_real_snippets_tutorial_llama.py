"""Programs in the style of yunjey's pytorch-tutorial (basics, feedforward, CNN with
batch norm, (bidirectional) LSTM classifiers, the LSTM language model with truncated
backprop, the GAN and VAE steps, the residual network) and of karpathy's llama2.c
(RMSNorm, real-valued rotary embeddings, grouped-query attention, SwiGLU, the AdamW
training loop with gradient accumulation, clipping and a cosine schedule, generation),
run with torch and with tapegrad; what they print must agree (tests/_snippets.py).
Weights are filled deterministically so both libraries start from the same model.
Written for these tests, not copied.
"""
import math
import os
import tempfile
import warnings

import numpy as np

from _snippets import assert_same_output


def _fill(torch, model, scale=0.3):
    """Every parameter gets sin-based values (the same in both libraries); norm weights
    stay near 1 so the statistics keep their meaning."""
    with torch.no_grad():
        for k, (name, p) in enumerate(model.named_parameters()):
            n = p.numel()
            v = scale * np.sin(np.arange(n) * 0.37 + k) / math.sqrt(max(p.shape[-1], 1))
            if "norm" in name or name.endswith("bn.weight") or (p.dim() == 1 and "weight" in name):
                v = 1.0 + 0.1 * np.sin(np.arange(n) + k)
            p.copy_(torch.tensor(v.reshape(tuple(p.shape)), dtype=p.dtype))


def _images(torch, n, c, h, w, seed=0):
    rng = np.random.RandomState(seed)
    x = torch.tensor(rng.rand(n, c, h, w).astype(np.float32))
    y = torch.tensor(rng.randint(0, 10, n))
    return x, y


# ---------------------------------------------------------------- 01-basics

def _basics(torch, print):
    nn = torch.nn
    x = torch.tensor(1., requires_grad=True)
    w = torch.tensor(2., requires_grad=True)
    b = torch.tensor(3., requires_grad=True)
    y = w * x + b
    y.backward()
    print(x.grad, w.grad, b.grad)

    x = torch.tensor(np.linspace(-1, 1, 30).reshape(10, 3), dtype=torch.float32)
    y = torch.tensor(np.cos(np.arange(20.0)).reshape(10, 2), dtype=torch.float32)
    linear = nn.Linear(3, 2)
    _fill(torch, linear)
    print('w: ', linear.weight)
    print('b: ', linear.bias)
    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(linear.parameters(), lr=0.01)
    loss = criterion(linear(x), y)
    print('loss: ', loss.item())
    loss.backward()
    print('dL/dw: ', linear.weight.grad)
    print('dL/db: ', linear.bias.grad)
    optimizer.step()
    print('loss after 1 step optimization: ', criterion(linear(x), y).item())

    a = np.array([[1, 2], [3, 4]])
    t = torch.from_numpy(a)
    print(t, t.dtype, type(t.numpy()))

    images, labels = _images(torch, 12, 3, 8, 8)
    ds = torch.utils.data.TensorDataset(images, labels)
    image, label = ds[0]
    print(image.size(), label, len(ds))
    loader = torch.utils.data.DataLoader(dataset=ds, batch_size=5, shuffle=False)
    data_iter = iter(loader)
    imgs, lbls = next(data_iter)
    print(imgs.shape, lbls, len(loader))
    for imgs, lbls in loader:
        print(imgs.size(0), end=' ')
    print()

    for param in linear.parameters():
        param.requires_grad = False
    linear.weight.requires_grad_(True)
    print([p.requires_grad for p in linear.parameters()])
    path = os.path.join(tempfile.mkdtemp(), 'params.ckpt')
    torch.save(linear.state_dict(), path)
    other = nn.Linear(3, 2)
    print(other.load_state_dict(torch.load(path)))
    print(torch.equal(other.weight, linear.weight))


def _pinned_loader(torch, print):
    """llama2.c's loader passes pin_memory=True; on a CPU-only machine torch warns each
    time an iterator starts, not when the loader is built."""
    ds = torch.utils.data.TensorDataset(torch.arange(6.0))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loader = torch.utils.data.DataLoader(ds, batch_size=4, pin_memory=True, num_workers=0)
        print("built", len(caught))
        for epoch in range(2):
            print([b[0].tolist() for b in loader], len(caught))
    print(sorted({str(w.message) for w in caught}))


def test_pinned_loader_warns_per_iterator():
    assert_same_output(_pinned_loader)


def test_pytorch_basics():
    assert_same_output(_basics)


def _regression(torch, print):
    nn = torch.nn
    x_train = np.array([[3.3], [4.4], [5.5], [6.71], [6.93], [4.168]], dtype=np.float32)
    y_train = np.array([[1.7], [2.76], [2.09], [3.19], [1.694], [1.573]], dtype=np.float32)
    model = nn.Linear(1, 1)
    _fill(torch, model)
    criterion = nn.MSELoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    for epoch in range(6):
        inputs = torch.from_numpy(x_train)
        targets = torch.from_numpy(y_train)
        loss = criterion(model(inputs), targets)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if (epoch + 1) % 2 == 0:
            print('Epoch [{}/{}], Loss: {:.4f}'.format(epoch + 1, 6, loss.item()))
    predicted = model(torch.from_numpy(x_train)).detach().numpy()
    print(predicted.dtype, predicted.shape, np.round(predicted[:2, 0], 4))


def test_linear_regression():
    assert_same_output(_regression)


def _feedforward(torch, print):
    nn = torch.nn

    class NeuralNet(nn.Module):
        def __init__(self, input_size, hidden_size, num_classes):
            super(NeuralNet, self).__init__()
            self.fc1 = nn.Linear(input_size, hidden_size)
            self.relu = nn.ReLU()
            self.fc2 = nn.Linear(hidden_size, num_classes)

        def forward(self, x):
            return self.fc2(self.relu(self.fc1(x)))

    images, labels = _images(torch, 40, 1, 28, 28)
    loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(images, labels),
                                         batch_size=10, shuffle=False)
    device = torch.device('cuda' if torch.cuda.is_available() else 'cpu')
    model = NeuralNet(784, 16, 10).to(device)
    _fill(torch, model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    total_step = len(loader)
    for i, (images, labels) in enumerate(loader):
        images = images.reshape(-1, 28 * 28).to(device)
        labels = labels.to(device)
        loss = criterion(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print('Epoch [{}/{}], Step [{}/{}], Loss: {:.4f}'.format(1, 1, i + 1, total_step,
                                                                loss.item()))
    with torch.no_grad():
        correct = total = 0
        for images, labels in loader:
            outputs = model(images.reshape(-1, 28 * 28))
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
        print('Accuracy: {} %'.format(100 * correct / total), predicted.dtype)


def test_feedforward_and_logistic():
    assert_same_output(_feedforward)


# ---------------------------------------------------------------- 02-intermediate

def _cnn(torch, print):
    nn = torch.nn

    class ConvNet(nn.Module):
        def __init__(self, num_classes=10):
            super(ConvNet, self).__init__()
            self.layer1 = nn.Sequential(nn.Conv2d(1, 4, kernel_size=5, stride=1, padding=2),
                                        nn.BatchNorm2d(4), nn.ReLU(),
                                        nn.MaxPool2d(kernel_size=2, stride=2))
            self.layer2 = nn.Sequential(nn.Conv2d(4, 8, kernel_size=5, stride=1, padding=2),
                                        nn.BatchNorm2d(8), nn.ReLU(),
                                        nn.MaxPool2d(kernel_size=2, stride=2))
            self.fc = nn.Linear(7 * 7 * 8, num_classes)

        def forward(self, x):
            out = self.layer2(self.layer1(x))
            out = out.reshape(out.size(0), -1)
            return self.fc(out)

    model = ConvNet(10)
    _fill(torch, model)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    images, labels = _images(torch, 16, 1, 28, 28)
    for i in range(3):
        x, y = images[i * 5:(i + 1) * 5 + 1], labels[i * 5:(i + 1) * 5 + 1]
        loss = criterion(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print('Step [{}/3], Loss: {:.4f}'.format(i + 1, loss.item()))
    # not running_mean: a conv bias before batch norm has a zero gradient up to rounding,
    # which Adam scales up to lr-sized steps that differ between the libraries
    print(model.layer1[1].running_var, model.layer1[1].num_batches_tracked)
    model.eval()
    with torch.no_grad():
        outputs = model(images)
        _, predicted = torch.max(outputs.data, 1)
        print(predicted, (predicted == labels).sum().item())


def test_convolutional_network():
    assert_same_output(_cnn, rtol=1e-3, atol=1e-5)


def _rnn(torch, print):
    nn = torch.nn

    class RNN(nn.Module):
        def __init__(self, input_size, hidden_size, num_layers, num_classes, bidirectional):
            super(RNN, self).__init__()
            self.hidden_size = hidden_size
            self.num_layers = num_layers
            self.dirs = 2 if bidirectional else 1
            self.lstm = nn.LSTM(input_size, hidden_size, num_layers, batch_first=True,
                                bidirectional=bidirectional)
            self.fc = nn.Linear(hidden_size * self.dirs, num_classes)

        def forward(self, x):
            h0 = torch.zeros(self.num_layers * self.dirs, x.size(0), self.hidden_size).to(x.device)
            c0 = torch.zeros(self.num_layers * self.dirs, x.size(0), self.hidden_size).to(x.device)
            out, _ = self.lstm(x, (h0, c0))
            return self.fc(out[:, -1, :])

    images, labels = _images(torch, 8, 1, 28, 28)
    for bidirectional in (False, True):
        model = RNN(28, 6, 2, 10, bidirectional)
        _fill(torch, model)
        optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
        for step in range(2):
            outputs = model(images.reshape(-1, 28, 28))
            loss = nn.CrossEntropyLoss()(outputs, labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            print('bidirectional={} Loss: {:.5f}'.format(bidirectional, loss.item()))
        print(model.lstm.weight_hh_l1.grad.norm(), outputs.shape)


def test_recurrent_networks():
    assert_same_output(_rnn, rtol=1e-3, atol=1e-5)


def _language_model(torch, print):
    nn = torch.nn
    from_words = "the cat sat on the mat and the dog ran to the cat".split() * 4
    word2idx = {}
    for w in from_words:
        word2idx.setdefault(w, len(word2idx))
    ids = torch.LongTensor([word2idx[w] for w in from_words])
    batch_size, seq_length = 4, 5
    num_batches = ids.size(0) // batch_size
    ids = ids[:num_batches * batch_size].view(batch_size, -1)
    vocab_size = len(word2idx)

    class RNNLM(nn.Module):
        def __init__(self, vocab_size, embed_size, hidden_size, num_layers):
            super(RNNLM, self).__init__()
            self.embed = nn.Embedding(vocab_size, embed_size)
            self.lstm = nn.LSTM(embed_size, hidden_size, num_layers, batch_first=True)
            self.linear = nn.Linear(hidden_size, vocab_size)

        def forward(self, x, h):
            out, (h, c) = self.lstm(self.embed(x), h)
            out = out.reshape(out.size(0) * out.size(1), out.size(2))
            return self.linear(out), (h, c)

    model = RNNLM(vocab_size, 6, 8, 1)
    _fill(torch, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.002)
    states = (torch.zeros(1, batch_size, 8), torch.zeros(1, batch_size, 8))
    for i in range(0, ids.size(1) - seq_length, seq_length):
        inputs = ids[:, i:i + seq_length]
        targets = ids[:, (i + 1):(i + 1) + seq_length]
        states = [state.detach() for state in states]
        outputs, states = model(inputs, states)
        loss = nn.CrossEntropyLoss()(outputs, targets.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        norm = nn.utils.clip_grad_norm_(model.parameters(), 0.5)
        optimizer.step()
        print('Step[{}], Loss: {:.4f}, Perplexity: {:5.2f}, norm {:.4f}'.format(
            i // seq_length, loss.item(), np.exp(loss.item()), norm))
    with torch.no_grad():
        state = (torch.zeros(1, 1, 8), torch.zeros(1, 1, 8))
        input = torch.ones(1, 1).long()
        words = []
        for _ in range(6):
            output, state = model(input, state)
            word_id = output.exp().argmax(dim=1).item()
            input.fill_(word_id)
            words.append(word_id)
        print(words, input.dtype, input.shape)


def test_language_model():
    assert_same_output(_language_model, rtol=1e-3, atol=1e-5)


def _resnet(torch, print):
    nn = torch.nn

    def conv3x3(in_channels, out_channels, stride=1):
        return nn.Conv2d(in_channels, out_channels, kernel_size=3, stride=stride, padding=1,
                         bias=False)

    class ResidualBlock(nn.Module):
        def __init__(self, in_channels, out_channels, stride=1, downsample=None):
            super(ResidualBlock, self).__init__()
            self.conv1 = conv3x3(in_channels, out_channels, stride)
            self.bn1 = nn.BatchNorm2d(out_channels)
            self.relu = nn.ReLU(inplace=True)
            self.conv2 = conv3x3(out_channels, out_channels)
            self.bn2 = nn.BatchNorm2d(out_channels)
            self.downsample = downsample

        def forward(self, x):
            residual = x
            out = self.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            if self.downsample:
                residual = self.downsample(x)
            out += residual
            return self.relu(out)

    class ResNet(nn.Module):
        def __init__(self):
            super(ResNet, self).__init__()
            self.conv = conv3x3(3, 4)
            self.bn = nn.BatchNorm2d(4)
            self.relu = nn.ReLU(inplace=True)
            self.layer1 = ResidualBlock(4, 4)
            down = nn.Sequential(conv3x3(4, 8, stride=2), nn.BatchNorm2d(8))
            self.layer2 = ResidualBlock(4, 8, 2, down)
            self.avg_pool = nn.AvgPool2d(8)
            self.fc = nn.Linear(8, 10)

        def forward(self, x):
            out = self.relu(self.bn(self.conv(x)))
            out = self.layer2(self.layer1(out))
            out = self.avg_pool(out)
            return self.fc(out.view(out.size(0), -1))

    model = ResNet()
    _fill(torch, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.001)
    images, labels = _images(torch, 6, 3, 16, 16)
    images = torch.nn.functional.pad(images, (4, 4, 4, 4))[:, :, 2:18, 2:18].flip(-1)
    for epoch in range(2):
        loss = nn.CrossEntropyLoss()(model(images), labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for param_group in optimizer.param_groups:
            param_group['lr'] = 0.001 / 3
        print("Epoch [{}/2] Loss: {:.4f}".format(epoch + 1, loss.item()))
    model.eval()
    with torch.no_grad():
        print(model(images).argmax(1))


def test_residual_network():
    assert_same_output(_resnet, rtol=1e-3, atol=1e-5)


# ---------------------------------------------------------------- 03-advanced

def _gan(torch, print):
    nn = torch.nn
    latent_size, hidden_size, image_size, batch_size = 8, 16, 64, 5
    D = nn.Sequential(nn.Linear(image_size, hidden_size), nn.LeakyReLU(0.2),
                      nn.Linear(hidden_size, hidden_size), nn.LeakyReLU(0.2),
                      nn.Linear(hidden_size, 1), nn.Sigmoid())
    G = nn.Sequential(nn.Linear(latent_size, hidden_size), nn.ReLU(),
                      nn.Linear(hidden_size, hidden_size), nn.ReLU(),
                      nn.Linear(hidden_size, image_size), nn.Tanh())
    _fill(torch, D)
    _fill(torch, G)
    criterion = nn.BCELoss()
    d_optimizer = torch.optim.Adam(D.parameters(), lr=0.0002)
    g_optimizer = torch.optim.Adam(G.parameters(), lr=0.0002)

    def denorm(x):
        out = (x + 1) / 2
        return out.clamp(0, 1)

    images, _ = _images(torch, batch_size, 1, 8, 8)
    images = (images - 0.5) / 0.5
    z0 = torch.tensor(np.cos(np.arange(batch_size * latent_size)).reshape(batch_size, -1),
                      dtype=torch.float32)
    for i in range(3):
        images_ = images.reshape(batch_size, -1)
        real_labels = torch.ones(batch_size, 1)
        fake_labels = torch.zeros(batch_size, 1)
        outputs = D(images_)
        d_loss_real = criterion(outputs, real_labels)
        real_score = outputs
        fake_images = G(z0 * (i + 1))
        outputs = D(fake_images)
        d_loss_fake = criterion(outputs, fake_labels)
        fake_score = outputs
        d_loss = d_loss_real + d_loss_fake
        d_optimizer.zero_grad()
        g_optimizer.zero_grad()
        d_loss.backward()
        d_optimizer.step()
        fake_images = G(z0)
        g_loss = criterion(D(fake_images), real_labels)
        d_optimizer.zero_grad()
        g_optimizer.zero_grad()
        g_loss.backward()
        g_optimizer.step()
        print('Step [{}/3], d_loss: {:.4f}, g_loss: {:.4f}, D(x): {:.2f}, D(G(z)): {:.2f}'
              .format(i + 1, d_loss.item(), g_loss.item(), real_score.mean().item(),
                      fake_score.mean().item()))
    fake_images = fake_images.reshape(fake_images.size(0), 1, 8, 8)
    print(denorm(fake_images).shape, denorm(fake_images).max() <= 1)

    # DCGAN builds its discriminator with LeakyReLU(0.2, inplace=True): the activation
    # overwrites the linear layer's output, which a kept reference sees
    act = nn.LeakyReLU(0.2, inplace=True)
    h = D[0](images_)
    out = act(h)
    print(act, out is h, h[0, :4], h.grad_fn is not None)
    out.pow(2).sum().backward()
    print(D[0].bias.grad[:4])
    kept = torch.zeros(3, requires_grad=True) - torch.tensor([1.0, 0.0, -2.0])
    # (detached: torch names the in-place node LeakyReluBackward1, tapegrad ...Backward0)
    print(torch.nn.functional.leaky_relu_(kept, 0.1).detach(), kept.detach())


def test_generative_adversarial_network():
    assert_same_output(_gan, rtol=1e-3, atol=1e-5)


def _vae(torch, print):
    nn = torch.nn
    F = torch.nn.functional
    image_size, h_dim, z_dim = 64, 16, 4

    class VAE(nn.Module):
        def __init__(self):
            super(VAE, self).__init__()
            self.fc1 = nn.Linear(image_size, h_dim)
            self.fc2 = nn.Linear(h_dim, z_dim)
            self.fc3 = nn.Linear(h_dim, z_dim)
            self.fc4 = nn.Linear(z_dim, h_dim)
            self.fc5 = nn.Linear(h_dim, image_size)

        def encode(self, x):
            h = F.relu(self.fc1(x))
            return self.fc2(h), self.fc3(h)

        def reparameterize(self, mu, log_var, eps):
            std = torch.exp(log_var / 2)
            return mu + eps * std

        def decode(self, z):
            return F.sigmoid(self.fc5(F.relu(self.fc4(z))))

        def forward(self, x, eps):
            mu, log_var = self.encode(x)
            z = self.reparameterize(mu, log_var, eps)
            return self.decode(z), mu, log_var

    model = VAE()
    _fill(torch, model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x, _ = _images(torch, 6, 1, 8, 8)
    x = x.view(-1, image_size)
    eps = torch.tensor(np.sin(np.arange(6 * z_dim)).reshape(6, z_dim), dtype=torch.float32)
    for i in range(3):
        x_reconst, mu, log_var = model(x, eps)
        reconst_loss = F.binary_cross_entropy(x_reconst, x, reduction='sum')
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            old_style = F.binary_cross_entropy(x_reconst, x, size_average=False)
        print([(w.category.__name__, str(w.message)) for w in caught])
        kl_div = - 0.5 * torch.sum(1 + log_var - mu.pow(2) - log_var.exp())
        loss = reconst_loss + kl_div
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print("Step [{}/3], Reconst Loss: {:.4f}, KL Div: {:.4f}".format(
            i + 1, reconst_loss.item(), kl_div.item()), torch.allclose(old_style, reconst_loss))
    with torch.no_grad():
        z = torch.zeros(2, z_dim)
        out = model.decode(z).view(-1, 1, 8, 8)
        x_concat = torch.cat([x[:2].view(-1, 1, 8, 8), out], dim=3)
        print(x_concat.shape, out[0, 0, 0])


def test_variational_autoencoder():
    assert_same_output(_vae, rtol=1e-3, atol=1e-5)


def _style_transfer(torch, print):
    nn = torch.nn
    layers = []
    for i in range(11):
        layers.append(nn.MaxPool2d(2, 2) if i in (4, 9) else
                      nn.Conv2d(3 if i == 0 else 4, 4, 3, padding=1) if i % 2 == 0 else
                      nn.ReLU(inplace=True))
    features_net = nn.Sequential(*layers)
    _fill(torch, features_net)
    select = ['0', '5', '10']

    def vgg(x):
        feats = []
        for name, layer in features_net._modules.items():
            x = layer(x)
            if name in select:
                feats.append(x)
        return feats

    mean = torch.tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
    std = torch.tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
    content = ((_images(torch, 1, 3, 16, 16, seed=3)[0][0] - mean) / std).unsqueeze(0)
    style = ((_images(torch, 1, 3, 16, 16, seed=4)[0][0] - mean) / std).unsqueeze(0)
    target = content.clone().requires_grad_(True)
    optimizer = torch.optim.Adam([target], lr=0.003, betas=[0.5, 0.999])
    for param in features_net.parameters():
        param.requires_grad_(False)
    for step in range(4):
        style_loss = content_loss = 0
        for f1, f2, f3 in zip(vgg(target), vgg(content), vgg(style)):
            content_loss += torch.mean((f1 - f2) ** 2)
            _, c, h, w = f1.size()
            f1 = f1.view(c, h * w)
            f3 = f3.view(c, h * w)
            f1 = torch.mm(f1, f1.t())
            f3 = torch.mm(f3, f3.t())
            style_loss += torch.mean((f1 - f3) ** 2) / (c * h * w)
        loss = content_loss + 100 * style_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print('Step [{}/4], Content Loss: {:.6f}, Style Loss: {:.6f}'.format(
            step + 1, content_loss.item(), style_loss.item()))
    img = target.clone().squeeze()
    img = ((img - torch.tensor([-2.12, -2.04, -1.80]).view(-1, 1, 1))
           / torch.tensor([4.37, 4.46, 4.44]).view(-1, 1, 1)).clamp_(0, 1)
    print(img.shape, img.requires_grad, img[0, 0, :4])


def _inplace_activations(torch, print):
    """torchvision-style blocks use ReLU6 / Hardtanh / ELU / SiLU / ReLU / LeakyReLU with
    inplace=True: the activation overwrites its input, gradients still reach the leaf."""
    nn = torch.nn
    mods = [nn.ReLU6(inplace=True), nn.Hardtanh(-0.5, 0.5, inplace=True),
            nn.ELU(0.7, inplace=True), nn.SiLU(inplace=True), nn.ReLU(inplace=True),
            nn.LeakyReLU(0.1, True)]
    for mod in mods:
        x = torch.tensor([-2.0, -0.3, 0.0, 0.4, 7.0], requires_grad=True)
        h = x * 1.5
        y = mod(h)
        (y * torch.arange(5.0)).sum().backward()
        with torch.no_grad():
            z = torch.tensor([-1.0, 0.2, 8.0])
            r = mod(z)
        print(mod, y is h, h.detach(), x.grad, r is z, z)
    try:
        nn.functional.elu(torch.ones(2, requires_grad=True), inplace=True)
    except RuntimeError as e:
        print(e)


def test_inplace_activation_modules():
    assert_same_output(_inplace_activations)


def test_neural_style_transfer():
    assert_same_output(_style_transfer, rtol=1e-3, atol=1e-6)


def _captioning(torch, print):
    nn = torch.nn
    pack_padded_sequence = torch.nn.utils.rnn.pack_padded_sequence

    class DecoderRNN(nn.Module):
        def __init__(self, embed_size, hidden_size, vocab_size, max_seq_length=5):
            super(DecoderRNN, self).__init__()
            self.embed = nn.Embedding(vocab_size, embed_size)
            self.lstm = nn.LSTM(embed_size, hidden_size, 1, batch_first=True)
            self.linear = nn.Linear(hidden_size, vocab_size)
            self.max_seg_length = max_seq_length

        def forward(self, features, captions, lengths):
            embeddings = torch.cat((features.unsqueeze(1), self.embed(captions)), 1)
            packed = pack_padded_sequence(embeddings, lengths, batch_first=True)
            hiddens, _ = self.lstm(packed)
            return self.linear(hiddens[0])

        def sample(self, features, states=None):
            sampled_ids = []
            inputs = features.unsqueeze(1)
            for i in range(self.max_seg_length):
                hiddens, states = self.lstm(inputs, states)
                _, predicted = self.linear(hiddens.squeeze(1)).max(1)
                sampled_ids.append(predicted)
                inputs = self.embed(predicted).unsqueeze(1)
            return torch.stack(sampled_ids, 1)

    decoder = DecoderRNN(8, 6, 12)
    _fill(torch, decoder)
    features = torch.tensor(np.cos(np.arange(24.0)).reshape(3, 8), dtype=torch.float32)
    captions = torch.tensor([[1, 4, 5, 2], [1, 3, 2, 0], [1, 2, 0, 0]])
    lengths = [4, 3, 2]
    targets = pack_padded_sequence(captions, lengths, batch_first=True)[0]
    print(targets)
    optimizer = torch.optim.Adam(decoder.parameters(), lr=0.01)
    for step in range(2):
        outputs = decoder(features, captions, lengths)
        loss = nn.CrossEntropyLoss()(outputs, targets)
        decoder.zero_grad()
        loss.backward()
        optimizer.step()
        print(outputs.shape, 'Loss: {:.4f}, Perplexity: {:5.4f}'.format(
            loss.item(), np.exp(loss.item())))
    print(decoder.sample(features)[0].cpu().numpy())


def test_image_captioning_decoder():
    assert_same_output(_captioning, rtol=1e-3, atol=1e-5)


# ---------------------------------------------------------------- llama2.c

def _llama(torch, print, n_kv_heads=2, flash=True):
    nn = torch.nn
    F = torch.nn.functional
    dim, n_layers, n_heads, vocab, max_seq_len = 16, 2, 4, 24, 8
    head_dim = dim // n_heads

    class RMSNorm(nn.Module):
        def __init__(self, dim, eps):
            super().__init__()
            self.eps = eps
            self.weight = nn.Parameter(torch.ones(dim))

        def forward(self, x):
            normed = x.float() * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + self.eps)
            return normed.type_as(x) * self.weight

    def rotary_tables(dim, end, theta=10000.0):
        freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
        t = torch.arange(end, device=freqs.device)
        freqs = torch.outer(t, freqs).float()
        return torch.cos(freqs), torch.sin(freqs)

    def broadcastable(f, x):
        assert f.shape == (x.shape[1], x.shape[-1])
        return f.view([d if i == 1 or i == x.ndim - 1 else 1 for i, d in enumerate(x.shape)])

    def rotate(x, cos, sin):
        xr, xi = x.float().reshape(x.shape[:-1] + (-1, 2)).unbind(-1)
        cos, sin = broadcastable(cos, xr), broadcastable(sin, xr)
        out = torch.stack([xr * cos - xi * sin, xr * sin + xi * cos], dim=-1)
        return out.flatten(3).type_as(x)

    def repeat_kv(x, n_rep):
        bs, slen, n_kv, hd = x.shape
        if n_rep == 1:
            return x
        return x[:, :, :, None, :].expand(bs, slen, n_kv, n_rep, hd).reshape(
            bs, slen, n_kv * n_rep, hd)

    class Attention(nn.Module):
        def __init__(self):
            super().__init__()
            self.n_rep = n_heads // n_kv_heads
            self.wq = nn.Linear(dim, n_heads * head_dim, bias=False)
            self.wk = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
            self.wv = nn.Linear(dim, n_kv_heads * head_dim, bias=False)
            self.wo = nn.Linear(n_heads * head_dim, dim, bias=False)
            self.attn_dropout = nn.Dropout(0.0)
            self.resid_dropout = nn.Dropout(0.0)
            self.flash = flash and hasattr(torch.nn.functional, 'scaled_dot_product_attention')
            mask = torch.full((1, 1, max_seq_len, max_seq_len), float("-inf"))
            self.register_buffer("mask", torch.triu(mask, diagonal=1))

        def forward(self, x, cos, sin):
            bsz, seqlen, _ = x.shape
            xq = self.wq(x).view(bsz, seqlen, n_heads, head_dim)
            xk = self.wk(x).view(bsz, seqlen, n_kv_heads, head_dim)
            xv = self.wv(x).view(bsz, seqlen, n_kv_heads, head_dim)
            xq, xk = rotate(xq, cos, sin), rotate(xk, cos, sin)
            xk, xv = repeat_kv(xk, self.n_rep), repeat_kv(xv, self.n_rep)
            xq, xk, xv = xq.transpose(1, 2), xk.transpose(1, 2), xv.transpose(1, 2)
            if self.flash:
                output = torch.nn.functional.scaled_dot_product_attention(
                    xq, xk, xv, attn_mask=None, dropout_p=0.0, is_causal=True)
            else:
                scores = torch.matmul(xq, xk.transpose(2, 3)) / math.sqrt(head_dim)
                scores = scores + self.mask[:, :, :seqlen, :seqlen]
                scores = F.softmax(scores.float(), dim=-1).type_as(xq)
                output = torch.matmul(self.attn_dropout(scores), xv)
            output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
            return self.resid_dropout(self.wo(output))

    class FeedForward(nn.Module):
        def __init__(self, hidden_dim, multiple_of):
            super().__init__()
            hidden_dim = int(2 * hidden_dim / 3)
            hidden_dim = multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)
            self.w1 = nn.Linear(dim, hidden_dim, bias=False)
            self.w2 = nn.Linear(hidden_dim, dim, bias=False)
            self.w3 = nn.Linear(dim, hidden_dim, bias=False)
            self.dropout = nn.Dropout(0.0)

        def forward(self, x):
            return self.dropout(self.w2(F.silu(self.w1(x)) * self.w3(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = Attention()
            self.feed_forward = FeedForward(4 * dim, 8)
            self.attention_norm = RMSNorm(dim, eps=1e-5)
            self.ffn_norm = RMSNorm(dim, eps=1e-5)

        def forward(self, x, cos, sin):
            h = x + self.attention.forward(self.attention_norm(x), cos, sin)
            return h + self.feed_forward.forward(self.ffn_norm(h))

    class Transformer(nn.Module):
        last_loss = None

        def __init__(self):
            super().__init__()
            self.tok_embeddings = nn.Embedding(vocab, dim)
            self.dropout = nn.Dropout(0.0)
            self.layers = torch.nn.ModuleList([Block() for _ in range(n_layers)])
            self.norm = RMSNorm(dim, eps=1e-5)
            self.output = nn.Linear(dim, vocab, bias=False)
            self.tok_embeddings.weight = self.output.weight  # weight tying
            cos, sin = rotary_tables(head_dim, max_seq_len)
            self.register_buffer("freqs_cos", cos, persistent=False)
            self.register_buffer("freqs_sin", sin, persistent=False)

        def forward(self, tokens, targets=None):
            _bsz, seqlen = tokens.shape
            h = self.dropout(self.tok_embeddings(tokens))
            cos, sin = self.freqs_cos[:seqlen], self.freqs_sin[:seqlen]
            for layer in self.layers:
                h = layer(h, cos, sin)
            h = self.norm(h)
            if targets is not None:
                logits = self.output(h)
                self.last_loss = F.cross_entropy(logits.view(-1, logits.size(-1)),
                                                 targets.view(-1), ignore_index=-1)
            else:
                logits = self.output(h[:, [-1], :])
                self.last_loss = None
            return logits

        def configure_optimizers(self, weight_decay, learning_rate, betas):
            param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
            decay = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay = [p for n, p in param_dict.items() if p.dim() < 2]
            groups = [{'params': decay, 'weight_decay': weight_decay},
                      {'params': nodecay, 'weight_decay': 0.0}]
            print(len(decay), sum(p.numel() for p in decay), len(nodecay),
                  sum(p.numel() for p in nodecay))
            return torch.optim.AdamW(groups, lr=learning_rate, betas=betas)

        @torch.inference_mode()
        def generate(self, idx, max_new_tokens, top_k=None):
            for _ in range(max_new_tokens):
                idx_cond = idx if idx.size(1) <= max_seq_len else idx[:, -max_seq_len:]
                logits = self(idx_cond)[:, -1, :]
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float('Inf')
                probs = F.softmax(logits, dim=-1)
                idx_next = torch.argmax(probs, dim=-1, keepdim=True)
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    model = Transformer()
    _fill(torch, model)
    for pn, p in model.named_parameters():
        if pn.endswith('w3.weight') or pn.endswith('wo.weight'):
            with torch.no_grad():
                p.mul_(0.02 / math.sqrt(2 * n_layers) / p.abs().max())
    print(sorted(model.state_dict().keys())[:4], len(model.state_dict()))
    optimizer = model.configure_optimizers(0.1, 5e-3, (0.9, 0.95))
    tokens = torch.tensor((np.arange(3 * 9) * 7 % vocab).reshape(3, 9))
    X, Y = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    Y[0, 0] = -1
    warmup, decay_iters, lr0 = 2, 6, 5e-3

    def get_lr(it):
        if it < warmup:
            return lr0 * it / warmup
        ratio = (it - warmup) / (decay_iters - warmup)
        return lr0 * 0.5 * (1.0 + math.cos(math.pi * ratio))

    for it in range(5):
        lr = get_lr(it)
        for group in optimizer.param_groups:
            group['lr'] = lr
        for micro in range(2):
            model(X[micro:micro + 2], Y[micro:micro + 2])
            loss = model.last_loss / 2
            loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        print(f"{it} | loss {loss.item() * 2:.4f} | lr {lr:e} | norm {norm.item():.4f}")
    print(model.output.weight.grad, model.tok_embeddings.weight is model.output.weight)
    model.eval()
    with torch.no_grad():
        losses = torch.zeros(2)
        for k in range(2):
            model(X, Y)
            losses[k] = model.last_loss.item()
        print(f"val loss {losses.mean():.4f}")
    out = model.generate(X[:2, :3], 6, top_k=5)
    print(out, out.dtype)


def test_llama2c_transformer_training():
    assert_same_output(_llama, rtol=1e-3, atol=1e-5)


def test_llama2c_manual_attention_and_multihead_kv():
    assert_same_output(lambda torch, print: _llama(torch, print, n_kv_heads=4, flash=False),
                       rtol=1e-3, atol=1e-5)
