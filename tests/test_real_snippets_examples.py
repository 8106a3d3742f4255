"""Programs in the style of pytorch/examples (mnist's test loop, vae's loss, the
forward-forward and siamese networks' tensor code, word_language_model's generate
step, regression's polynomial fit), run with torch and with tapegrad; what they print
must agree (tests/_snippets.py). Written for these tests, not copied.
"""
from itertools import count

import numpy as np

from _snippets import assert_same_output


def _f32(torch, a):
    return torch.tensor(np.asarray(a), dtype=torch.float32)


def _device_setup(torch, print):
    use_accel = torch.accelerator.is_available()
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    print(use_accel, device, device == torch.device("cpu"), str(device), device.type)
    x = torch.randn(8, 3).to(device)
    print(x.shape, x.cpu().shape, x.device, x.is_cuda)
    kwargs = {'batch_size': 4}
    if use_accel:
        kwargs.update({'num_workers': 1, 'pin_memory': True})
    print(kwargs)


def test_device_setup():
    assert_same_output(_device_setup)


def _vae_loss(torch, print):
    F = torch.nn.functional
    mu = _f32(torch, np.linspace(-1.5, 1.5, 30).reshape(3, 10)).requires_grad_()
    logvar = _f32(torch, np.linspace(-0.3, 0.6, 30).reshape(3, 10)).requires_grad_()
    std = torch.exp(0.5 * logvar)
    eps = torch.randn_like(std)
    z = mu + eps * std
    print(z.shape, z.dtype, z.requires_grad)
    x = _f32(torch, np.linspace(0.02, 0.98, 3 * 196).reshape(3, 196))
    recon = torch.sigmoid(_f32(torch, np.linspace(-2.5, 2.5, 3 * 196).reshape(3, 196)))
    BCE = F.binary_cross_entropy(recon, x.view(-1, 196), reduction='sum')
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss = BCE + KLD
    loss.backward()
    train_loss = 0
    train_loss += loss.item()
    print('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
        2, 3, 600, 100. * 3 / 600, loss.item() / len(x)))
    print('====> Epoch: {} Average loss: {:.4f}'.format(2, train_loss / 600))
    print(mu.grad.norm(), logvar.grad.sum(), f"{KLD:.3f}", f"{BCE.item():.2f}")
    n = min(x.size(0), 2)
    grid = torch.cat([x.view(3, 1, 14, 14)[:n], recon.view(3, 1, 14, 14)[:n]])
    print(grid.shape, grid.view(grid.size(0), -1).mean(1))
    with torch.no_grad():
        sample = torch.randn(16, 10)
        print(sample.shape, sample.requires_grad)


def test_vae_loss_and_sampling():
    assert_same_output(_vae_loss)


def _forward_forward(torch, print):
    x_pos = _f32(torch, np.linspace(-2, 2, 15).reshape(3, 5))
    x_ = x_pos.clone()
    x_[:, :3] *= 0.0
    x_[range(x_.shape[0]), 1] = x_.max()
    print(x_)
    x_direction = x_pos / (x_pos.norm(2, 1, keepdim=True) + 1e-4)
    g_pos = x_direction.pow(2).mean(1)
    loss = torch.log(1 + torch.exp(torch.cat([-g_pos + 1.5, g_pos - 1.5]))).mean()
    print(x_direction, g_pos, loss)
    goodness = [torch.tensor([0.3, 0.1, 0.6]).unsqueeze(1),
                torch.tensor([0.2, 0.8, 0.4]).unsqueeze(1)]
    goodness = torch.cat(goodness, 1)
    err = 1.0 - goodness.argmax(1).eq(torch.tensor([0, 1, 1])).float().mean().item()
    print(goodness.argmax(1), err)


def test_forward_forward_tensor_code():
    assert_same_output(_forward_forward)


def _siamese_and_generate(torch, print):
    targets = torch.tensor([0, 1, 1, 0], dtype=torch.float)
    out = torch.tensor([0.3, 0.8, 0.45, 0.1])
    pred = torch.where(out > 0.5, 1, 0)
    print(pred, pred.dtype, pred.eq(targets.view_as(pred)).sum().item(),
          torch.where(out > 0.5, 1.0, 0.0))
    print(torch.randint(0, 7, (1,)).item() < 7, torch.randint(0, 2, (5,)).shape,
          torch.tensor(1, dtype=torch.float))
    weights = torch.tensor([[0.3, 1.5, -0.5, 0.0]]).squeeze().div(0.8).exp().cpu()
    idx = torch.multinomial(weights, 1)[0]
    inp = torch.randint(4, (1, 1), dtype=torch.long)
    inp.fill_(idx)
    print(inp.shape, inp.dtype, idx.dtype, idx.shape, bool(inp[0, 0] == idx))


def test_siamese_and_generate_tensor_code():
    assert_same_output(_siamese_and_generate)


def _mnist_test_loop(torch, print):
    F = torch.nn.functional
    test_loss, correct = 0, 0
    with torch.no_grad():
        for k in range(2):
            output = F.log_softmax(_f32(torch, np.linspace(-2, 2 + k, 40).reshape(4, 10)), dim=1)
            target = torch.tensor([9, 0, 5, 9])
            test_loss += F.nll_loss(output, target, reduction='sum').item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    test_loss /= 8
    print('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
        test_loss, correct, 8, 100. * correct / 8))
    print(torch.flatten(torch.ones(2, 3, 4), 1).shape)


def test_mnist_test_loop():
    assert_same_output(_mnist_test_loop)


def _polynomial_fit(torch, print):
    F = torch.nn.functional
    W_target = _f32(torch, [[1.5], [-2.0], [0.5]])
    b_target = _f32(torch, [0.75])

    def features(x):
        x = x.unsqueeze(1)
        return torch.cat([x ** i for i in range(1, 4)], 1)

    def desc(W, b):
        s = 'y = '
        for i, w in enumerate(W):
            s += '{:+.2f} x^{} '.format(w, i + 1)
        return s + '{:+.2f}'.format(b[0])

    fc = torch.nn.Linear(3, 1)
    with torch.no_grad():
        fc.weight.zero_()
        fc.bias.zero_()
    xs = _f32(torch, np.linspace(-1, 1, 16))
    for batch_idx in count(1):
        bx = features(xs)
        by = bx.mm(W_target) + b_target.item()
        fc.zero_grad()
        output = F.smooth_l1_loss(fc(bx), by)
        loss = output.item()
        output.backward()
        for param in fc.parameters():
            param.data.add_(-0.1 * param.grad)
        if loss < 1e-3 or batch_idx == 300:
            break
    print('Loss: {:.6f} after {} batches'.format(loss, batch_idx))
    print('==> Learned function:\t' + desc(fc.weight.view(-1), fc.bias))
    print('==> Actual function:\t' + desc(W_target.view(-1), b_target))


def test_polynomial_regression_loop():
    assert_same_output(_polynomial_fit, rtol=1e-3)
