"""pytorch/examples' vision programs, from running the real programs with `import torch`
resolving to tapegrad: dcgan (`torch.backends.cudnn`, `input.is_xpu`) and
super_resolution (PixelShuffle; torch.pixel_shuffle/pixel_unshuffle against torch). Run
with torch and with tapegrad; what they print must agree (tests/_snippets.py). Written
for these tests, not copied.
"""
import math

import importlib
import numpy as np
import pytest

from _snippets import assert_same_output, fill_parameters


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
    fill_parameters(torch, netD)
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
    fill_parameters(torch, model)
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
