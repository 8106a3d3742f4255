"""The local derivatives of the common layers, checked numerically.

Each rule is computed twice: by tapegrad's backward pass and by the formula written
out in NumPy. Run: python examples/layer_rules.py
"""
import numpy as np

import tapegrad as tg
import tapegrad.nn.functional as F

SEED = 0
N, IN, OUT = 5, 3, 4

rng = np.random.default_rng(SEED)
X, W, b = rng.standard_normal((N, IN)), rng.standard_normal((OUT, IN)), rng.standard_normal(OUT)
dY = rng.standard_normal((N, OUT))


def show(name, ours, formula):
    err = np.abs(np.asarray(ours) - np.asarray(formula)).max()
    print(f"{name:<44} max |autodiff - formula| = {err:.1e}")
    assert err < 1e-12


# Linear Y = X W^T + b
x, w, bias = (tg.tensor(a, requires_grad=True) for a in (X, W, b))
F.linear(x, w, bias).backward(tg.tensor(dY))
show("Linear  dX = dY W", x.grad.numpy(), dY @ W)
show("Linear  dW = dY^T X", w.grad.numpy(), dY.T @ X)
show("Linear  db = dY.sum(0)", bias.grad.numpy(), dY.sum(0))

# ReLU: the gradient passes where the input was > 0 (relu'(0) is taken as 0)
x = tg.tensor([-1.0, 0.0, 2.0], requires_grad=True)
F.relu(x).backward(tg.tensor([5.0, 5.0, 5.0]))
show("ReLU    dx = dy * (x > 0)", x.grad.numpy(), [0.0, 0.0, 5.0])

# sigmoid and tanh: from the saved OUTPUT
x = tg.tensor(X, requires_grad=True)
s = F.sigmoid(x)
s.backward(tg.ones_like(s))
show("sigmoid dx = s (1 - s)", x.grad.numpy(), s.detach().numpy() * (1 - s.detach().numpy()))
x = tg.tensor(X, requires_grad=True)
t = F.tanh(x)
t.backward(tg.ones_like(t))
show("tanh    dx = 1 - out^2", x.grad.numpy(), 1 - t.detach().numpy() ** 2)

# Broadcasting in forward is a sum in backward
bb = tg.tensor(b, requires_grad=True)
(tg.tensor(dY) * 1.0 + bb).backward(tg.tensor(dY))
show("broadcast (N,4)+(4,): db = dY.sum(0)", bb.grad.numpy(), dY.sum(0))

# Embedding: repeated indices ADD (scatter-add)
E = tg.tensor(W, requires_grad=True)
idx = np.array([2, 0, 2, 2])
G = rng.standard_normal((4, IN))
F.embedding(tg.tensor(idx), E).backward(tg.tensor(G))
expected = np.zeros_like(W)
np.add.at(expected, idx, G)
show("Embedding dW[i] = sum of dY rows with idx==i", E.grad.numpy(), expected)
print("   row 2 was used 3 times:", np.round(E.grad.numpy()[2], 4), "=", np.round(G[[0, 2, 3]].sum(0), 4))

# Residual y = x + f(x): dx = dy + (gradient through f)
x = tg.tensor(X, requires_grad=True)
y = x + F.tanh(x)
y.backward(tg.ones_like(y))
show("Residual dx = dy + dy * (1 - tanh(x)^2)", x.grad.numpy(), 1 + (1 - np.tanh(X) ** 2))
print("all layer rules agree")
