"""Programs in the style of PyTorch's own tutorials (beginner_source/basics: tensors and
autograd; blitz: tensor and autograd tutorials), run with torch and with tapegrad; what
they print must agree (tests/_snippets.py). Written for these tests, not copied.
"""
import numpy as np

from _snippets import assert_same_output


def _tensors_basics(torch, print):
    rows = [[2, 7], [1, 8]]
    t_data = torch.tensor(rows)
    t_np = torch.from_numpy(np.array(rows))
    print(f"From numpy: \n {t_np} \n")
    t_ones = torch.ones_like(t_data)
    print(f"Ones Tensor: \n {t_ones} \n")
    t_rand = torch.rand_like(t_data, dtype=torch.float)
    print(t_rand.shape, t_rand.dtype, bool(((t_rand >= 0) & (t_rand < 1)).all()))
    shape = (3, 2,)
    print(f"Zeros Tensor: \n {torch.zeros(shape)}")
    t = torch.rand(2, 5)
    print(f"Shape of tensor: {t.shape}")
    print(f"Datatype of tensor: {t.dtype}")
    print(f"Device tensor is stored on: {t.device}")
    if torch.cuda.is_available() & (torch.device('cuda').index is not None):
        t = t.to('cuda')
    print(torch.device('cuda'), torch.device('cuda', 1), torch.device('cuda:0').index,
          repr(torch.device('cpu')))
    t = torch.ones(3, 5)
    print('First row: ', t[0])
    print('First column: ', t[:, 0])
    print('Last column:', t[..., -1])
    t[:, 2] = 0
    print(t)
    print(torch.cat([t, t], dim=0))
    print(torch.stack([t[0], t[1]]).shape)
    y1 = t @ t.T
    y2 = t.matmul(t.T)
    y3 = torch.rand_like(y1)
    torch.matmul(t, t.T, out=y3)
    print(y3, torch.equal(y1, y3), (y1 == y2).all())
    z3 = torch.rand_like(t)
    torch.mul(t, t, out=z3)
    print(z3)
    agg = t.sum()
    agg_item = agg.item()
    print(agg_item, type(agg_item))
    t.add_(3)
    print(t, "\n")
    t.t_()
    print(t.shape, t)
    o = torch.ones(4)
    n = o.numpy()
    o.add_(2)
    print(f"o: {o}")
    print(f"n: {n}")
    n = np.zeros(3)
    o = torch.from_numpy(n)
    np.add(n, 4, out=n)
    print(f"o: {o}")


def test_tensor_basics_tutorial_style():
    assert_same_output(_tensors_basics)


def _printing_and_dtypes(torch, print):
    x = torch.tensor([[0.7654321, 23456.78], [3e-6, -8.0]])
    print(x, x.double(), x.half(), x.int(), x.bool(), x.long(), x.to(torch.int8))
    print(torch.arange(12).view(3, 4), torch.linspace(0, 2, 5), torch.empty(0),
          torch.zeros(3, 0))
    print(torch.tensor(2.25), torch.tensor(False), torch.tensor([3e9, 2.0]),
          torch.tensor([4e-9, 1.0]))
    print(torch.tensor([float('nan'), float('inf'), -float('inf'), 0.5]))
    print(torch.tensor([4, 5, 6], dtype=torch.uint8), torch.tensor([0.5], dtype=torch.float16))
    print(torch.arange(1500.).reshape(30, 50))
    print(torch.return_types.sort is type(torch.sort(x)), torch.sort(x, 1))


def test_printing_and_dtypes():
    assert_same_output(_printing_and_dtypes, rtol=0)


def _autograd_basics(torch, print):
    F = torch.nn.functional
    x = torch.ones(4)
    y = torch.ones(2)
    w = torch.tensor(np.linspace(-0.8, 0.8, 8).reshape(4, 2), dtype=torch.float32,
                     requires_grad=True)
    b = torch.tensor([0.25, -0.5], requires_grad=True)
    z = torch.matmul(x, w) + b
    loss = F.binary_cross_entropy_with_logits(z, y)
    print(f"Gradient function for z = {z.grad_fn is not None}")
    print(z)
    loss.backward()
    print(w.grad)
    print(b.grad)
    z = torch.matmul(x, w) + b
    print(z.requires_grad)
    with torch.no_grad():
        z = torch.matmul(x, w) + b
    print(z.requires_grad)
    z_det = (torch.matmul(x, w) + b).detach()
    print(z_det.requires_grad)
    inp = torch.eye(3, 4, requires_grad=True)
    out = (inp + 2).pow(2).t()
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"First call\n{inp.grad}")
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"\nSecond call\n{inp.grad}")
    inp.grad.zero_()
    out.backward(torch.ones_like(out), retain_graph=True)
    print(f"\nCall after zeroing gradients\n{inp.grad}")


def test_autograd_basics_tutorial_style():
    assert_same_output(_autograd_basics)


def _blitz(torch, print):
    a = torch.tensor([1., 4.], requires_grad=True)
    b = torch.tensor([5., 2.], requires_grad=True)
    Q = 2 * a**3 - b**2
    Q.backward(gradient=torch.tensor([1., 1.]))
    print(6 * a**2 == a.grad)
    print(-2 * b == b.grad)
    print(Q)
    x = torch.rand(4, 4)
    zz = torch.rand((4, 4), requires_grad=True)
    print(f"Does `a` require gradients?: {(x + x).requires_grad}")
    print(f"Does `b` require gradients?: {(x + zz).requires_grad}")
    x = torch.empty(3, 2)
    print(x.size(), x.shape[0], x.size(1), len(x))
    x = torch.zeros(3, 2, dtype=torch.long)
    print(x)
    x = torch.tensor([4.5, 2])
    x = x.new_ones(3, 2, dtype=torch.double)
    print(x)
    x = torch.randn_like(x, dtype=torch.float)
    print(x.size(), x.dtype)
    y = torch.rand(3, 2)
    result = torch.empty(3, 2)
    torch.add(x, y, out=result)
    print(torch.allclose(result, x + y))
    y.add_(x)
    x = torch.randn(2, 6)
    print(x.view(12).size(), x.view(-1, 4).size())
    print(type(torch.randn(1).item()))
    print(torch.from_numpy(np.ones(3)))
    print(torch.cuda.is_available())
    scores = torch.tensor([[0.2, 0.1, 0.7], [0.5, 0.3, 0.2]])
    print(scores.max(1), scores.argmax(1, keepdim=True), scores.max(1)[1].view(-1, 1))
    print(torch.max(scores, 1))
    _, predicted = torch.max(scores, 1)
    print(predicted, (predicted == torch.tensor([2, 1])).sum().item())


def test_blitz_tutorial_style():
    assert_same_output(_blitz)
