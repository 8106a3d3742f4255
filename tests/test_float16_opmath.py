"""float16 is computed in float32 and rounded once, as torch's "opmath" (core/opmath.py).

Differential against torch: values and float16 gradients of reductions, norms, matmuls,
pointwise ops with intermediate steps and nn kernels on float16 inputs whose float16
intermediates would overflow (300**2 + 400**2 > 65504) or lose counts (a float16 sum
stops at 2048), and the float32/float64 paths unchanged.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.nn.functional as F

TF = torch.nn.functional


def _pair(a, rg=True):
    return (tg.tensor(a).half().requires_grad_(rg),
            torch.tensor(a, dtype=torch.float32).half().requires_grad_(rg))


def _close(got, exp):
    assert str(got.dtype).split(".")[-1] == str(exp.dtype).split(".")[-1]
    np.testing.assert_allclose(got.detach().float().numpy(), exp.detach().float().numpy(),
                               rtol=1e-3, atol=1e-3, equal_nan=True)


BIG = np.array([[300., 400., -250.], [200., 100., 150.]])
CASES = {
    "norm": lambda x, m, F: x.norm(),
    "norm_dim": lambda x, m, F: m.linalg.vector_norm(x, dim=1),
    "normalize": lambda x, m, F: F.normalize(x, dim=1),
    "rms_norm": lambda x, m, F: F.rms_norm(x, (3,)),
    "cosine_similarity": lambda x, m, F: F.cosine_similarity(x, x * 2),
    "var": lambda x, m, F: x.var(),
    "std": lambda x, m, F: x.std(dim=0),
    "sum_sq": lambda x, m, F: (x * x).sum() / 1000,
    "logsumexp": lambda x, m, F: (x / 50).logsumexp(1),
    "softmax": lambda x, m, F: (x / 50).softmax(1),
    "log_softmax": lambda x, m, F: (x / 50).log_softmax(1),
    "layer_norm": lambda x, m, F: F.layer_norm(x, (3,)),
    "mean": lambda x, m, F: x.mean(),
    "matmul": lambda x, m, F: x @ x.t(),
    "gelu": lambda x, m, F: F.gelu(x / 100),
    "softplus": lambda x, m, F: F.softplus(x / 100),
    "cumsum": lambda x, m, F: (x * 10).cumsum(1),
    "mse": lambda x, m, F: F.mse_loss(x, x * 0),
    "linear": lambda x, m, F: F.linear(x, x),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float16_like_torch(name):
    f = CASES[name]
    x, t = _pair(BIG)
    y, z = f(x, tg, F), f(t, torch, TF)
    _close(y, z)
    cot = np.random.default_rng(0).standard_normal(tuple(z.shape))
    y.backward(tg.tensor(cot).half())
    z.backward(torch.tensor(cot, dtype=torch.float32).half())
    assert x.grad.dtype == tg.float16
    _close(x.grad, t.grad)


def test_clip_grad_norm_float16():
    a, b = _pair([300., 400.])
    a.grad, b.grad = tg.tensor([300., 400.]).half(), torch.tensor([300., 400.]).half()
    _close(tg.nn.utils.clip_grad_norm_([a], 1.0), torch.nn.utils.clip_grad_norm_([b], 1.0))
    _close(a.grad, b.grad)
    assert np.isfinite(a.grad.float().numpy()).all() and a.grad.float().numpy()[1] > 0.7
    a.grad, b.grad = tg.tensor([300., 400.]).half(), torch.tensor([300., 400.]).half()
    _close(tg.nn.utils.clip_grad_norm_([a], 1.0, norm_type=3),
           torch.nn.utils.clip_grad_norm_([b], 1.0, norm_type=3))


def test_linear_half_bias_gradient_counts_past_2048():
    torch.manual_seed(0)
    lt = torch.nn.Linear(4, 2).half()
    lg = tg.nn.Linear(4, 2).half()
    lg.load_state_dict({k: tg.from_numpy(v.detach().numpy().copy())
                        for k, v in lt.state_dict().items()})
    xt, xg = torch.ones(3000, 4).half(), tg.ones(3000, 4).half()
    lt(xt).sum().backward()
    lg(xg).sum().backward()
    _close(lg.bias.grad, lt.bias.grad)
    assert lg.bias.grad.float().numpy().tolist() == [3000.0, 3000.0]
    _close(lg.weight.grad, lt.weight.grad)


def test_mixed_dtypes_and_views_unchanged():
    x = tg.tensor([1., 2., 3.]).half()
    assert (x + tg.tensor([1., 2., 3.])).dtype == tg.float32  # float32 input decides
    assert x.sum(dtype=tg.float32).dtype == tg.float32       # dtype= decides
    assert x.float().dtype == tg.float32 and x.double().dtype == tg.float64
    v = x[1:]                                                 # a view stays a view
    v.add_(1)
    assert x.tolist() == [1.0, 3.0, 4.0]
    assert x.argmax().dtype == tg.int64 and (x > 1).dtype == tg.bool


def test_float32_and_float64_paths_unchanged():
    # the float32 square overflows as in torch: no widening for float32
    for dt, tdt in ((tg.float32, torch.float32), (tg.float64, torch.float64)):
        a = tg.tensor([3e19, 4e19], dtype=dt)
        b = torch.tensor([3e19, 4e19], dtype=tdt)
        np.testing.assert_array_equal((a * a).numpy(), (b * b).numpy())
        np.testing.assert_array_equal(a.sum().numpy(), b.sum().numpy())
