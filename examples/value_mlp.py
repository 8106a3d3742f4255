"""A micrograd-style MLP on tg.Value: Neuron, Layer, MLP, trained on a toy 2-D data set.

Config at the top. Every number is a Python float inside a `tg.Value`; one training step
builds a scalar graph of a few tens of thousands of nodes and calls `loss.backward()`.

    python examples/value_mlp.py
"""
import math
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tapegrad import Value  # noqa: E402

SEED = 1337
N_POINTS = 60           # two interleaving half-moons, 30 each
NOISE = 0.1
HIDDEN = [16, 16]
STEPS = 40
LR_START = 1.0          # decays linearly to 10% of this
ALPHA = 1e-4            # L2 regularization


class Module:
    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0.0

    def parameters(self):
        return []


class Neuron(Module):
    """act = sum_i w_i x_i + b, then ReLU (unless it is an output neuron)."""

    def __init__(self, nin, nonlin=True):
        self.w = [Value(random.uniform(-1, 1), label="w") for _ in range(nin)]
        self.b = Value(0.0, label="b")
        self.nonlin = nonlin

    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return act.relu() if self.nonlin else act

    def parameters(self):
        return self.w + [self.b]

    def __repr__(self):
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):
    def __init__(self, nin, nout, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x):
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]


class MLP(Module):
    def __init__(self, nin, nouts):
        sz = [nin] + nouts
        self.layers = [Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1)
                       for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]


def make_moons(n, noise, rng):
    """Two interleaving half circles; labels -1 and +1."""
    X, y = [], []
    for i in range(n):
        t = math.pi * rng.random()
        if i % 2 == 0:
            X.append([math.cos(t), math.sin(t)])
            y.append(-1.0)
        else:
            X.append([1.0 - math.cos(t), 0.5 - math.sin(t)])
            y.append(1.0)
    X = [[a + rng.gauss(0, noise), b + rng.gauss(0, noise)] for a, b in X]
    return X, y


def loss_fn(model, X, y):
    """SVM max-margin loss + L2; also the accuracy."""
    scores = [model(x) for x in X]
    losses = [(1 + -yi * si).relu() for yi, si in zip(y, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    reg = ALPHA * sum(p * p for p in model.parameters())
    acc = sum((yi > 0) == (si.data > 0) for yi, si in zip(y, scores)) / len(y)
    return data_loss + reg, acc


def main():
    random.seed(SEED)
    X, y = make_moons(N_POINTS, NOISE, random.Random(SEED))
    model = MLP(2, HIDDEN + [1])
    print(f"MLP 2-{'-'.join(map(str, HIDDEN))}-1, {len(model.parameters())} parameters")
    history = []
    for k in range(STEPS):
        loss, acc = loss_fn(model, X, y)
        model.zero_grad()
        loss.backward()
        lr = LR_START * (1.0 - 0.9 * k / STEPS)
        for p in model.parameters():
            p.data -= lr * p.grad
        history.append(loss.data)
        if k % 5 == 0 or k == STEPS - 1:
            print(f"step {k:3d}  loss {loss.data:.4f}  accuracy {acc:.0%}")
    return history


if __name__ == "__main__":
    main()
