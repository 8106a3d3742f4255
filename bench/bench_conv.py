"""Benchmark: forward + backward of a LeNet-sized conv stack, tapegrad vs PyTorch CPU vs a
hand-written NumPy im2col implementation (no autograd), reported as time ratios.

    x (64, 1, 28, 28) -> conv(1->6, 5x5) -> relu -> maxpool 2 -> conv(6->16, 5x5) -> relu
      -> maxpool 2 -> (64, 16, 4, 4) -> sum -> backward to x and both weights/biases

Usage: python bench/bench_conv.py [--threads 1] [--batch 64] [--dtype float32] [--reps 30]
Same thread count for all three (env vars set before NumPy is imported,
torch.set_num_threads). Same allocator for all three: by default glibc keeps freed large
buffers (tapegrad/_alloc.py; without it page faults dominate tapegrad's time);
--default-malloc measures glibc's defaults.
"""
import argparse
import os
import sys

# ---- configuration (threads must be fixed before numpy/torch load) -------------------
_p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
_p.add_argument("--threads", type=int, default=1)
_p.add_argument("--batch", type=int, default=64)
_p.add_argument("--dtype", default="float32", choices=["float32", "float64"])
_p.add_argument("--reps", type=int, default=30)
_p.add_argument("--default-malloc", action="store_true",
                help="keep glibc's default malloc thresholds (by default the bench calls "
                     "tapegrad._alloc.keep_freed_memory(), which applies to all three)")
ARGS = _p.parse_args() if __name__ == "__main__" else _p.parse_args([])
for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = str(ARGS.threads)

import time  # noqa: E402

import numpy as np  # noqa: E402
from numpy.lib.stride_tricks import as_strided  # noqa: E402

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from tapegrad._alloc import keep_freed_memory  # noqa: E402

MALLOC = "default" if ARGS.default_malloc else ("tuned" if keep_freed_memory() else "default")
import tapegrad as tg  # noqa: E402
import tapegrad.nn.functional as FC  # noqa: E402


# ---- hand-written NumPy reference (forward and backward by hand, stride 1, no padding) ---
def np_conv_forward(x, w, b):
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    oh, ow = H - kh + 1, W - kw + 1
    s = x.strides
    win = as_strided(x, (N, C, kh, kw, oh, ow), (s[0], s[1], s[2], s[3], s[2], s[3]))
    cols = win.reshape(N, C * kh * kw, oh * ow)                         # (N, K, L) copy
    y = np.matmul(w.reshape(O, -1), cols).reshape(N, O, oh, ow) + b.reshape(O, 1, 1)
    return y, cols


def np_conv_backward(g, x, w, cols):
    N, C, H, W = x.shape
    O, _, kh, kw = w.shape
    oh, ow = g.shape[2:]
    g3 = g.reshape(N, O, oh * ow)
    db = g3.sum(axis=(0, 2))
    dw = np.tensordot(g3, cols, axes=([0, 2], [0, 2])).reshape(w.shape)
    dcols = np.matmul(w.reshape(O, -1).T, g3).reshape(N, C, kh, kw, oh, ow)
    dx = np.zeros_like(x)
    for a in range(kh):
        for c in range(kw):
            dx[:, :, a:a + oh, c:c + ow] += dcols[:, :, a, c]
    return dx, dw, db


def np_pool_forward(x):
    N, C, H, W = x.shape
    v = x.reshape(N, C, H // 2, 2, W // 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
        N, C, H // 2, W // 2, 4)
    a = v.argmax(-1)
    return np.take_along_axis(v, a[..., None], -1)[..., 0], a


def np_pool_backward(g, a, shape):
    N, C, H, W = shape
    d = np.zeros((N, C, H // 2, W // 2, 4), g.dtype)
    np.put_along_axis(d, a[..., None], g[..., None], -1)
    return d.reshape(N, C, H // 2, W // 2, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(shape)


def numpy_step(x, w1, b1, w2, b2):
    y1, c1 = np_conv_forward(x, w1, b1)
    r1 = np.maximum(y1, 0)
    p1, a1 = np_pool_forward(r1)
    y2, c2 = np_conv_forward(p1, w2, b2)
    r2 = np.maximum(y2, 0)
    p2, a2 = np_pool_forward(r2)
    g = np.ones_like(p2)
    g = np_pool_backward(g, a2, r2.shape) * (y2 > 0)
    gp1, dw2, db2 = np_conv_backward(g, p1, w2, c2)
    g = np_pool_backward(gp1, a1, r1.shape) * (y1 > 0)
    dx, dw1, db1 = np_conv_backward(g, x, w1, c1)
    return p2, (dx, dw1, db1, dw2, db2)


# ---- the three contenders ------------------------------------------------------------
def tapegrad_step(x, w1, b1, w2, b2):
    for t in (x, w1, b1, w2, b2):
        t.grad = None
    h = FC.max_pool2d(tg.relu(FC.conv2d(x, w1, b1)), 2)
    h = FC.max_pool2d(tg.relu(FC.conv2d(h, w2, b2)), 2)
    h.sum().backward()
    return h, (x.grad, w1.grad, b1.grad, w2.grad, b2.grad)


def torch_step(torch, F, x, w1, b1, w2, b2):
    for t in (x, w1, b1, w2, b2):
        t.grad = None
    h = F.max_pool2d(F.relu(F.conv2d(x, w1, b1)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, w2, b2)), 2)
    h.sum().backward()
    return h, (x.grad, w1.grad, b1.grad, w2.grad, b2.grad)


def timeit(fn, reps):
    """(best wall, median wall, median CPU) seconds. CPU time (process_time) is steadier on
    a loaded machine; with several threads it counts all of them."""
    fn()
    fn()
    wall, cpu = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    wall.sort()
    cpu.sort()
    return wall[0], wall[len(wall) // 2], cpu[len(cpu) // 2]


def main():
    import torch
    import torch.nn.functional as F
    torch.set_num_threads(ARGS.threads)
    dt = np.dtype(ARGS.dtype)
    rng = np.random.default_rng(0)
    arrs = [rng.standard_normal((ARGS.batch, 1, 28, 28)), rng.standard_normal((6, 1, 5, 5)) * 0.2,
            rng.standard_normal(6) * 0.1, rng.standard_normal((16, 6, 5, 5)) * 0.1,
            rng.standard_normal(16) * 0.1]
    arrs = [a.astype(dt) for a in arrs]
    tgs = [tg.tensor(a, requires_grad=True) for a in arrs]
    ths = [torch.tensor(a, requires_grad=True) for a in arrs]

    # correctness first: all three agree
    out_tg, g_tg = tapegrad_step(*tgs)
    out_th, g_th = torch_step(torch, F, *ths)
    out_np, g_np = numpy_step(*arrs)
    tol = 1e-3 if dt == np.float32 else 1e-9
    for a, b, c in zip([out_tg] + list(g_tg), [out_th] + list(g_th), [out_np] + list(g_np)):
        a = a.data if hasattr(a, "data") and not hasattr(a, "detach") else a
        b = b.detach().numpy()
        np.testing.assert_allclose(np.asarray(a), b, rtol=tol, atol=tol)
        np.testing.assert_allclose(c, b, rtol=tol, atol=tol)

    t_tg = timeit(lambda: tapegrad_step(*tgs), ARGS.reps)
    t_th = timeit(lambda: torch_step(torch, F, *ths), ARGS.reps)
    t_np = timeit(lambda: numpy_step(*arrs), ARGS.reps)
    print(f"LeNet conv stack fwd+bwd, batch {ARGS.batch}x1x28x28, {ARGS.dtype}, "
          f"{ARGS.threads} thread(s), malloc {MALLOC}, torch {torch.__version__}, "
          f"numpy {np.__version__}")
    print(f"{'':12s} {'best ms':>9s} {'median ms':>10s} {'cpu ms':>8s} {'ratio (wall)':>13s} "
          f"{'ratio (cpu)':>12s}")
    for name, (best, med, cpu) in [("tapegrad", t_tg), ("torch", t_th), ("numpy-im2col", t_np)]:
        print(f"{name:12s} {best * 1e3:9.2f} {med * 1e3:10.2f} {cpu * 1e3:8.2f} "
              f"{med / t_th[1]:13.2f} {cpu / t_th[2]:12.2f}")
    print(f"tapegrad / hand-written numpy (median wall): {t_tg[1] / t_np[1]:.2f}")

if __name__ == "__main__":
    main()
