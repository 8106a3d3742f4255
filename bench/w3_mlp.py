"""The W3 workload's shared pieces: the 784-256-128-10 ReLU MLP's initial weights, its
hand-written NumPy training step (the reference a framework is compared with) and the
tapegrad step with an SGD optimizer (the one tg.compile captures whole). bench/run.py's
(b) row and bench/bench_compile.py's w3 row time the same code.

Imported after the importing script has set the BLAS thread variables (NumPy reads them
when it is first imported).
"""
import numpy as np

SIZES = (784, 256, 128, 10)


def init(rng, sizes=SIZES):
    """[W1, b1, W2, b2, W3, b3], float32, uniform in +-1/sqrt(fan_in) (torch's Linear)."""
    out = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1 / np.sqrt(fan_in)
        out += [rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32),
                rng.uniform(-bound, bound, fan_out).astype(np.float32)]
    return out


def numpy_step(P, xs, onehot, lr):
    """One step, forward and backward written out, SGD in place on the arrays of P;
    the loss (mean cross-entropy over the rows)."""
    W1, b1, W2, b2, W3, b3 = P
    n = xs.shape[0]
    z1 = xs @ W1 + b1
    h1 = np.maximum(z1, 0)
    z2 = h1 @ W2 + b2
    h2 = np.maximum(z2, 0)
    z3 = h2 @ W3 + b3
    m = z3.max(1, keepdims=True)
    e = np.exp(z3 - m)
    s = e.sum(1, keepdims=True)
    logp = z3 - m - np.log(s)
    loss = -(logp * onehot).sum() / n
    dz3 = (e / s - onehot) / n                         # softmax - onehot, over n
    dW3, db3 = h2.T @ dz3, dz3.sum(0)
    dz2 = (dz3 @ W3.T) * (z2 > 0)
    dW2, db2 = h1.T @ dz2, dz2.sum(0)
    dz1 = (dz2 @ W2.T) * (z1 > 0)
    dW1, db1 = xs.T @ dz1, dz1.sum(0)
    for p, g in zip(P, (dW1, db1, dW2, db2, dW3, db3)):
        p -= lr * g
    return loss


def tg_sgd_step(tg, P, opt):
    """The step in tapegrad (P: its tensors, opt: an SGD over them): forward,
    F.cross_entropy, zero_grad, backward, opt.step(); `tg.compile(...)` of it is the
    whole-step row."""
    F = tg.nn.functional

    def train_step(x, y):
        W1, b1, W2, b2, W3, b3 = P
        h = (x @ W1 + b1).relu()
        h = (h @ W2 + b2).relu()
        loss = F.cross_entropy(h @ W3 + b3, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        return loss
    return train_step
