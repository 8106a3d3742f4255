"""Fused cross-entropy and fused batch norm vs the composites.

A fused kernel is ONE table entry whose backward is one formula; the composite is the
same math written op by op (tapegrad/nn/composite_reference.py). They must agree, and the fused
one must be faster. Run: python examples/fused_kernels.py
"""
import time

import numpy as np

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.nn import composite_reference as R

SEED = 0
N, C = 32, 27            # the character model: 32 examples, 27 characters
BN_SHAPE = (32, 64)
REPEAT = 200

rng = np.random.default_rng(SEED)


def timed(fn):
    best = float("inf")
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(REPEAT):
            fn()
        best = min(best, (time.perf_counter() - t0) / REPEAT)
    return best


def count_nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        stack.extend(p.grad_fn for p in n.parents())
    return len(seen)


# ---- cross-entropy --------------------------------------------------------------
print("== cross-entropy, n = 32, C = 27 (float32)")
logits0 = rng.standard_normal((N, C)).astype(np.float32)
y = tg.tensor(rng.integers(0, C, N))

x = tg.tensor(logits0, requires_grad=True)
loss = F.cross_entropy(x, y)
xc = tg.tensor(logits0, requires_grad=True)
loss_c, logp = R.cross_entropy(xc, y, return_logprobs=True)
print(f"nodes recorded: fused {count_nodes(loss)}, composite {count_nodes(loss_c)}")
loss.backward()
logp.retain_grad()
loss_c.backward()
picked = logp.grad.numpy()[np.arange(N), y.detach().numpy()]
print(f"loss fused {loss.item():.6f}   composite {loss_c.item():.6f}")
others = np.delete(logp.grad.numpy().ravel(), np.ravel_multi_index((np.arange(N), y.detach().numpy()), (N, C)))
print(f"d loss / d picked log-probs: {np.unique(picked)} (-1/32 = {-1 / 32}); "
      f"elsewhere: max |.| = {np.abs(others).max()}")
print(f"rows of dlogits sum to: max |row sum| = {np.abs(x.grad.numpy().sum(1)).max():.1e}")
print(f"max |dlogits fused - composite| = {np.abs(x.grad.numpy() - xc.grad.numpy()).max():.1e}")


def ce_fused():
    F.cross_entropy(tg.tensor(logits0, requires_grad=True), y).backward()


def ce_comp():
    R.cross_entropy(tg.tensor(logits0, requires_grad=True), y).backward()


tf, tc = timed(ce_fused), timed(ce_comp)
print(f"forward+backward: fused {tf * 1e6:.0f} us, composite {tc * 1e6:.0f} us "
      f"-> fused is {tc / tf:.1f}x faster")

# ---- batch norm -------------------------------------------------------------------
print("\n== batch norm, training mode, batch", BN_SHAPE)
x0 = (rng.standard_normal(BN_SHAPE) * 2 + 1)
w0, b0 = rng.standard_normal(BN_SHAPE[1]), rng.standard_normal(BN_SHAPE[1])
cot = rng.standard_normal(BN_SHAPE)
for correction, label in ((0, "PyTorch: normalize with biased var (n), default"),
                          (1, "makemore: Bessel's correction (n - 1)")):
    for dtype in (np.float64, np.float32):
        grads = []
        for fused in (True, False):
            x, w, b = (tg.tensor(a.astype(dtype), requires_grad=True) for a in (x0, w0, b0))
            out = (F.batch_norm(x, None, None, w, b, training=True, correction=correction)
                   if fused else R.batch_norm(x, w, b, correction=correction))
            out.backward(tg.tensor(cot.astype(dtype)))
            grads.append((out.detach().numpy(), x.grad.numpy(), w.grad.numpy(), b.grad.numpy()))
        err = max(np.abs(a - c).max() for a, c in zip(*grads))
        print(f"{label:<50} {np.dtype(dtype).name}: max |fused - composite| = {err:.1e}")

x32 = x0.astype(np.float32)
w32, b32 = w0.astype(np.float32), b0.astype(np.float32)
cot32 = tg.tensor(cot.astype(np.float32))


def bn(fused):
    def run():
        x, w, b = (tg.tensor(a, requires_grad=True) for a in (x32, w32, b32))
        out = F.batch_norm(x, None, None, w, b, training=True) if fused else R.batch_norm(x, w, b)
        out.backward(cot32)
    return run


tf, tc = timed(bn(True)), timed(bn(False))
print(f"forward+backward: fused {tf * 1e6:.0f} us, composite {tc * 1e6:.0f} us "
      f"-> fused is {tc / tf:.1f}x faster")
print("running_var is updated with the UNBIASED batch variance in both conventions "
      "(PyTorch's behaviour)")
