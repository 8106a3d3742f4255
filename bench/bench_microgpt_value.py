"""Bench: tg.Value vs a microgpt-style Value on a microgpt-shaped GPT (train + sample).

karpathy's microgpt.py trains a 1-layer GPT on names with a scalar autograd `Value`. This
benchmark is written here in the same shape (not a copy): the same ops and sizes
(n_embd 16, 4 heads, 1 layer, block 16, vocabulary 27, RMSNorm, ReLU MLP, softmax
attention with a KV cache, mean cross-entropy over a name, Adam with a linear decay,
sampling at temperature 0.5), written against a `Value` class passed in. Two reference
engines are written below, as small as their designs allow:

    LocalValue    microgpt's design: __slots__, each op stores its local derivatives,
                  a recursive depth-first topological sort (the reference of issue 15)
    ClosureValue  micrograd's design: a `_backward` closure per node, a set `_prev`

Each round trains N steps from the same seed with each engine (interleaved, gc on, CPU
time) and samples 5 names; the losses and the samples must be IDENTICAL (==, not close):
tg.Value builds the same graph, sums gradients in the same order and uses the same
formulas. Prints medians, the speed-up over the reference(s), and whether all matched.
ClosureValue is about 4x slower than LocalValue, so it runs only with --closures.

    python bench/bench_microgpt_value.py [--steps 10] [--rounds 3] [--closures]
"""
import argparse
import math
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tapegrad.value import Value as TGValue  # noqa: E402

N_EMBD, N_HEAD, N_LAYER, BLOCK = 16, 4, 1, 16
HEAD_DIM = N_EMBD // N_HEAD


# ---- reference engines --------------------------------------------------------------

class LocalValue:
    """microgpt's Value design: local derivatives stored by each op."""
    __slots__ = ("data", "grad", "kids", "locs")

    def __init__(self, data, kids=(), locs=()):
        self.data, self.grad, self.kids, self.locs = data, 0, kids, locs

    def __add__(self, o):
        o = o if isinstance(o, LocalValue) else LocalValue(o)
        return LocalValue(self.data + o.data, (self, o), (1, 1))

    def __mul__(self, o):
        o = o if isinstance(o, LocalValue) else LocalValue(o)
        return LocalValue(self.data * o.data, (self, o), (o.data, self.data))

    def __pow__(self, k):
        return LocalValue(self.data ** k, (self,), (k * self.data ** (k - 1),))

    def log(self):
        return LocalValue(math.log(self.data), (self,), (1 / self.data,))

    def exp(self):
        return LocalValue(math.exp(self.data), (self,), (math.exp(self.data),))

    def relu(self):
        return LocalValue(max(0, self.data), (self,), (float(self.data > 0),))

    def __neg__(self): return self * -1
    def __radd__(self, o): return self + o
    def __sub__(self, o): return self + (-o)
    def __rsub__(self, o): return o + (-self)
    def __rmul__(self, o): return self * o
    def __truediv__(self, o): return self * o ** -1
    def __rtruediv__(self, o): return o * self ** -1

    def backward(self):
        topo, seen = [], set()

        def visit(v):
            if v not in seen:
                seen.add(v)
                for c in v.kids:
                    visit(c)
                topo.append(v)
        visit(self)
        self.grad = 1
        for v in reversed(topo):
            for c, d in zip(v.kids, v.locs):
                c.grad += d * v.grad


class ClosureValue:
    """micrograd's Value design: one `_backward` closure per node."""

    def __init__(self, data, kids=()):
        self.data, self.grad, self._prev, self._backward = data, 0, kids, _noop

    def _out(self, data, kids, locs):
        out = ClosureValue(data, kids)

        def _backward():
            for c, d in zip(kids, locs):
                c.grad += d * out.grad
        out._backward = _backward
        return out

    def __add__(self, o):
        o = o if isinstance(o, ClosureValue) else ClosureValue(o)
        return self._out(self.data + o.data, (self, o), (1, 1))

    def __mul__(self, o):
        o = o if isinstance(o, ClosureValue) else ClosureValue(o)
        return self._out(self.data * o.data, (self, o), (o.data, self.data))

    def __pow__(self, k):
        return self._out(self.data ** k, (self,), (k * self.data ** (k - 1),))

    def log(self):
        return self._out(math.log(self.data), (self,), (1 / self.data,))

    def exp(self):
        return self._out(math.exp(self.data), (self,), (math.exp(self.data),))

    def relu(self):
        return self._out(max(0, self.data), (self,), (float(self.data > 0),))

    __neg__ = LocalValue.__neg__
    __radd__ = LocalValue.__radd__
    __sub__ = LocalValue.__sub__
    __rsub__ = LocalValue.__rsub__
    __rmul__ = LocalValue.__rmul__
    __truediv__ = LocalValue.__truediv__
    __rtruediv__ = LocalValue.__rtruediv__

    def backward(self):
        topo, seen = [], set()

        def visit(v):
            if v not in seen:
                seen.add(v)
                for c in v._prev:
                    visit(c)
                topo.append(v)
        visit(self)
        self.grad = 1
        for v in reversed(topo):
            v._backward()


def _noop():
    pass


# ---- the model, written against any Value class -----------------------------------------

def words():
    """Names for the data set: the `names` package's lists when installed (the `train`
    extra), else a fixed list. Lowercase a-z only."""
    try:
        from tapegrad.data.names import Names
        ws = Names("first").words
    except RuntimeError:          # the `names` package is not installed
        ws = None
    if not ws:
        ws = ("emma olivia ava isabella sophia mia charlotte amelia harper evelyn abigail "
              "emily elizabeth sofia ella madison scarlett victoria aria grace chloe camila "
              "penelope riley layla lillian nora zoey mila aubrey hannah lily addison "
              "eleanor natalie luna savannah brooklyn leah zoe stella hazel ellie paisley "
              "audrey skylar violet claire bella aurora lucy anna samantha caroline").split()
    return list(ws)


def build(V, seed, vocab):
    rng = random.Random(seed)

    def mat(nout, nin):
        return [[V(rng.gauss(0, 0.08)) for _ in range(nin)] for _ in range(nout)]
    sd = {"wte": mat(vocab, N_EMBD), "wpe": mat(BLOCK, N_EMBD), "lm_head": mat(vocab, N_EMBD)}
    for i in range(N_LAYER):
        for k in ("wq", "wk", "wv", "wo"):
            sd[f"l{i}.{k}"] = mat(N_EMBD, N_EMBD)
        sd[f"l{i}.fc1"] = mat(4 * N_EMBD, N_EMBD)
        sd[f"l{i}.fc2"] = mat(N_EMBD, 4 * N_EMBD)
    return sd, rng


def linear(x, w):
    return [sum(wi * xi for wi, xi in zip(row, x)) for row in w]


def softmax(logits):
    m = max(v.data for v in logits)
    exps = [(v - m).exp() for v in logits]
    total = sum(exps)
    return [e / total for e in exps]


def rmsnorm(x):
    ms = sum(xi * xi for xi in x) / len(x)
    scale = (ms + 1e-5) ** -0.5
    return [xi * scale for xi in x]


def gpt(sd, tok, pos, keys, vals):
    x = rmsnorm([t + p for t, p in zip(sd["wte"][tok], sd["wpe"][pos])])
    for li in range(N_LAYER):
        res = x
        x = rmsnorm(x)
        q, k, v = (linear(x, sd[f"l{li}.{n}"]) for n in ("wq", "wk", "wv"))
        keys[li].append(k)
        vals[li].append(v)
        att = []
        for h in range(N_HEAD):
            s = h * HEAD_DIM
            qh = q[s:s + HEAD_DIM]
            logits = [sum(qh[j] * kt[s + j] for j in range(HEAD_DIM)) / HEAD_DIM ** 0.5
                      for kt in keys[li]]
            w = softmax(logits)
            att += [sum(w[t] * vals[li][t][s + j] for t in range(len(w)))
                    for j in range(HEAD_DIM)]
        x = [a + b for a, b in zip(linear(att, sd[f"l{li}.wo"]), res)]
        res = x
        x = [h.relu() for h in linear(rmsnorm(x), sd[f"l{li}.fc1"])]
        x = [a + b for a, b in zip(linear(x, sd[f"l{li}.fc2"]), res)]
    return linear(x, sd["lm_head"])


def train(V, docs, steps, seed=42, n_samples=5):
    """`steps` Adam steps, one name each; returns (losses, samples)."""
    chars = sorted(set("".join(docs)))
    bos = len(chars)
    sd, rng = build(V, seed, len(chars) + 1)
    params = [p for m in sd.values() for row in m for p in row]
    lr, b1, b2, eps = 0.01, 0.85, 0.99, 1e-8
    m1, m2 = [0.0] * len(params), [0.0] * len(params)
    losses = []
    for step in range(steps):
        toks = [bos] + [chars.index(c) for c in docs[step % len(docs)]] + [bos]
        n = min(BLOCK, len(toks) - 1)
        keys, vals = [[] for _ in range(N_LAYER)], [[] for _ in range(N_LAYER)]
        terms = [-softmax(gpt(sd, toks[p], p, keys, vals))[toks[p + 1]].log() for p in range(n)]
        loss = (1 / n) * sum(terms)
        loss.backward()
        lr_t = lr * (1 - step / steps)
        for i, p in enumerate(params):
            m1[i] = b1 * m1[i] + (1 - b1) * p.grad
            m2[i] = b2 * m2[i] + (1 - b2) * p.grad ** 2
            mh, vh = m1[i] / (1 - b1 ** (step + 1)), m2[i] / (1 - b2 ** (step + 1))
            p.data -= lr_t * mh / (vh ** 0.5 + eps)
            p.grad = 0
        losses.append(loss.data)
    samples = []
    for _ in range(n_samples):
        keys, vals = [[] for _ in range(N_LAYER)], [[] for _ in range(N_LAYER)]
        tok, out = bos, []
        for pos in range(BLOCK):
            probs = softmax([lg / 0.5 for lg in gpt(sd, tok, pos, keys, vals)])
            tok = rng.choices(range(bos + 1), weights=[p.data for p in probs])[0]
            if tok == bos:
                break
            out.append(chars[tok])
        samples.append("".join(out))
    return losses, samples


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--closures", action="store_true", help="also time ClosureValue")
    args = ap.parse_args(argv)
    docs = words()
    random.Random(42).shuffle(docs)
    engines = {"tg.Value": TGValue, "LocalValue": LocalValue}
    if args.closures:
        engines["ClosureValue"] = ClosureValue
    times = {k: [] for k in engines}
    results = {}
    for _ in range(args.rounds):
        for name, V in engines.items():
            t0 = time.process_time()
            results[name] = train(V, docs, args.steps)
            times[name].append(time.process_time() - t0)
    med = {k: sorted(v)[len(v) // 2] for k, v in times.items()}
    for k in engines:
        print(f"{k:13s}: median {med[k]:7.2f} s CPU for {args.steps} steps + 5 samples "
              f"({args.rounds} rounds)")
    same = all(results[k] == results["LocalValue"] for k in engines)
    speedup = med["LocalValue"] / med["tg.Value"]
    print(f"speed-up of tg.Value over microgpt-style LocalValue: {speedup:.2f}x (target >= 1.4)")
    if args.closures:
        print(f"speed-up over micrograd-style ClosureValue: "
              f"{med['ClosureValue'] / med['tg.Value']:.2f}x")
    print(f"losses and samples identical: {same}  (last loss {results['tg.Value'][0][-1]:.6f},"
          f" samples {results['tg.Value'][1]})")
    return speedup, same


if __name__ == "__main__":
    main()
