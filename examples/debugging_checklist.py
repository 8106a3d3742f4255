"""Debugging backward: the checklist of things that break training silently.

Each item is one function that builds the failure, prints the
symptom, and shows the tool that reveals it (and the fix). docs/debugging-backward.md
quotes this script's output (the doc tests rerun it); tests/test_debugging_doc.py checks
the numbers against PyTorch.

    python examples/debugging_checklist.py          # all items
    python examples/debugging_checklist.py 6        # one item
"""
import contextlib
import math
import os
import sys
import warnings

import numpy as np

EXAMPLES = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(EXAMPLES, ".."))

import tapegrad as tg  # noqa: E402
from tapegrad import nn  # noqa: E402
from tapegrad.utils.checkpoint import checkpoint_sequential  # noqa: E402
from tapegrad.utils.memory import saved_bytes  # noqa: E402

# ---- configuration -----------------------------------------------------------------
SEED = 0
N_EXAMPLES = 8          # item 1: examples in the regression batch
CLAMP_AT = 1.0          # item 1: the (wrong) clamp on the per-example loss
W0 = 2.5                # item 1: the weight being fitted (the truth is 3)
DEPTH = 10              # item 5: sigmoid layers in the vanishing stack
WIDTH = 32
CKPT_LAYERS, CKPT_SEGMENTS, CKPT_WIDTH, CKPT_BATCH = 16, 4, 64, 32   # items 7-8


def data(n=N_EXAMPLES, seed=SEED):
    """y = 3x + noise, with two outliers (the examples a loss clamp would silence)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(n)
    y = 3.0 * x + 0.1 * rng.standard_normal(n)
    y[:2] += 5.0
    return x, y


# ---- 1. clamping the loss ------------------------------------------------------------
def item1_clamped_loss():
    """Clamping the LOSS value zeroes the gradient of every clamped example."""
    x0, y0 = data()
    x, y = tg.tensor(x0, dtype=tg.float64), tg.tensor(y0, dtype=tg.float64)
    w = tg.tensor(W0, dtype=tg.float64, requires_grad=True)
    pred = w * x
    pred.retain_grad()                          # the tool: per-example gradients
    per_example = (pred - y) ** 2
    loss = per_example.clamp(max=CLAMP_AT).mean()
    loss.backward()
    # pred.grad is 0 wherever per_example > CLAMP_AT
    clamped = per_example.detach().numpy() > CLAMP_AT
    g = pred.grad.numpy()
    print(f"examples whose loss exceeds {CLAMP_AT}: {int(clamped.sum())} of {len(g)}")
    print(f"their gradient dL/dpred: {np.abs(g[clamped]).max():.1f} (every one of them)")
    print(f"dL/dw = {w.grad.item():.4f}: only the {int((~clamped).sum())} small-loss examples "
          f"teach w")
    dw_clamped = w.grad.item()
    # the fix: bound the GRADIENT, not the loss (what a Huber loss does): a hook on pred
    w.grad = None
    pred = w * x
    pred.register_hook(lambda g: g.clamp(-CLAMP_AT / len(g), CLAMP_AT / len(g)))
    ((pred - y) ** 2).mean().backward()
    print(f"clamping the gradient instead: dL/dw = {w.grad.item():.4f} (all examples count)")
    return {"n_clamped": int(clamped.sum()), "grad_clamped": g[clamped],
            "dw_clamped": dw_clamped, "dw_fixed": w.grad.item(), "x": x0, "y": y0,
            "w0": W0}


# ---- 2. backward on a non-scalar ------------------------------------------------------
def item2_nonscalar_backward():
    """`backward()` on a non-scalar is an error, not an implicit sum."""
    w = tg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = w * 2                                # shape (3,)
    try:
        y.backward()                         # RuntimeError
    except RuntimeError as e:
        msg = str(e)
        print(f"RuntimeError: {msg}")
    y.sum().backward()                       # the fix: reduce to a scalar first
    print(f"y.sum().backward() -> w.grad = {w.grad.tolist()}")
    return msg


# ---- 3. cutting the graph ---------------------------------------------------------------
def item3_graph_cuts():
    """detach(), a NumPy round trip or an integer cast cut the graph (grad None)."""
    rng = np.random.default_rng(SEED)
    x = tg.tensor(rng.standard_normal((4, 3)))
    w1 = tg.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    w2 = tg.tensor(rng.standard_normal((5, 1)), requires_grad=True)
    cuts = {
        "none": lambda h: h,
        "detach": lambda h: h.detach(),
        "numpy": lambda h: tg.tensor(h.detach().numpy()),   # h.numpy() alone raises
        "int cast": lambda h: (h * 100).long().double() / 100,
    }
    out = {}
    for name, cut in cuts.items():
        w1.grad = w2.grad = None
        h = tg.tanh(x @ w1)
        loss = (cut(h) @ w2).sum()
        loss.backward()
        none = [n for n, p in (("w1", w1), ("w2", w2)) if p.grad is None]  # the tool
        out[name] = none
        print(f"{name:>9}: parameters with grad None after backward: {none}")
    return out


# ---- 4. who gets a gradient ----------------------------------------------------------------
def item4_roles():
    """Inputs need no grad, activations keep no .grad, frozen weights are skipped."""
    rng = np.random.default_rng(SEED)
    x = tg.tensor(rng.standard_normal((4, 3)))                     # input (images)
    w1 = tg.tensor(rng.standard_normal((3, 3)), requires_grad=True)
    frozen = tg.tensor(rng.standard_normal((3, 3)))                 # requires_grad=False
    w2 = tg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    h = tg.relu(x @ w1)                                             # activation
    loss = (h @ frozen @ w2).pow(2).mean()
    loss.backward()
    rows = []
    for name, t in (("x (input)", x), ("w1", w1), ("h (activation)", h),
                    ("frozen", frozen), ("w2", w2)):
        rows.append((name, t.is_leaf, t.requires_grad, t.is_leaf and t.grad is not None))
        print(f"{name:>15}: is_leaf={t.is_leaf!s:5} requires_grad={t.requires_grad!s:5} "
              f"has .grad={rows[-1][3]}")  # h.grad is not read: it warns, as in torch
    return rows


# ---- 5. vanishing and exploding gradients -------------------------------------------------
def mlp(depth, width, act, gain=1.0, he_init=False, seed=SEED):
    tg.manual_seed(seed)
    layers = []
    for _ in range(depth):
        lin = nn.Linear(width, width)
        if he_init:  # Kaiming/He: variance 2/fan_in keeps ReLU activations' scale
            nn.init.kaiming_normal_(lin.weight, nonlinearity="relu")
            nn.init.zeros_(lin.bias)
        with tg.no_grad():
            lin.weight.data *= gain
        layers += [lin, act()]
    return nn.Sequential(*layers, nn.Linear(width, 1))


def _one_step(model, seed=SEED):
    rng = np.random.default_rng(seed)
    x = tg.tensor(rng.standard_normal((64, WIDTH)).astype(np.float32))
    y = tg.tensor(rng.standard_normal((64, 1)).astype(np.float32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        monitor = tg.utils.GradMonitor(model)
        nn.functional.mse_loss(model(x), y).backward()
        monitor.step()          # records, checks, warns
    return monitor, [str(w.message) for w in caught]


def item5_vanishing_exploding():
    """Per-layer gradient norms (GradMonitor) show vanishing or exploding gradients."""
    out = {}
    for name, model in (("sigmoid, default init", mlp(DEPTH, WIDTH, nn.Sigmoid)),
                        ("relu, default init", mlp(DEPTH, WIDTH, nn.ReLU)),
                        ("relu, He init", mlp(DEPTH, WIDTH, nn.ReLU, he_init=True)),
                        ("relu, He init x4", mlp(DEPTH, WIDTH, nn.ReLU, gain=4.0,
                                                 he_init=True))):
        mon, msgs = _one_step(model)
        norms = mon.last(mon.grad_norm)
        first, last = norms["0.weight"], norms[f"{2 * DEPTH}.weight"]
        kinds = sorted({k for _, k, _ in mon.findings})
        out[name] = (first, last, kinds)
        print(f"{name:>21}: |grad| first {first:.1e}, last {last:.1e}, ratio "
              f"{first / last:.0e}; warns: {', '.join(kinds) or 'nothing'}")
    return out


# ---- 6. NaN blame -----------------------------------------------------------------------
def item6_nan_blame():
    """A nan in the gradient: anomaly mode names the op that produced it, and where."""
    x = tg.tensor(0.0, requires_grad=True)
    y = tg.sqrt(x * x)                 # the same function as abs(x), but not at 0
    with np.errstate(all="ignore"):
        y.backward()
    print(f"sqrt(x*x) at x = 0: x.grad = {x.grad.item()}")
    x.grad = None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with tg.autograd.detect_anomaly():
            y = tg.sqrt(x * x)
            try:
                y.backward()    # RuntimeError naming sqrt and the line above
            except RuntimeError as e:
                msg = str(e)
    # the whole message, with this file's path relative to the repository
    print(msg.replace(os.path.dirname(EXAMPLES) + os.sep, ""))
    x.grad = None
    tg.sqrt(x * x + 1e-12).backward()     # the fix: keep sqrt away from 0
    print(f"sqrt(x*x + 1e-12): x.grad = {x.grad.item()}")
    return msg


# ---- 7-8. memory: checkpointing and no_grad ------------------------------------------------
def _chain(seed=SEED):
    tg.manual_seed(seed)
    return nn.Sequential(*[m for _ in range(CKPT_LAYERS)
                           for m in (nn.Linear(CKPT_WIDTH, CKPT_WIDTH), nn.Tanh())])


def item7_checkpoint_memory():
    """Checkpointing trades memory for recompute; the gradients are identical."""
    model = _chain()
    x = tg.randn(CKPT_BATCH, CKPT_WIDTH)
    y = model(x)
    plain = saved_bytes(y)
    y.pow(2).mean().backward()
    ref = [p.grad.numpy().copy() for p in model.parameters()]
    model.zero_grad()
    y = checkpoint_sequential(model, CKPT_SEGMENTS, x)
    ck = saved_bytes(y)     # tg.utils.memory: bytes held by the live graph
    y.pow(2).mean().backward()
    diff = max(float(np.abs(a - p.grad.numpy()).max()) for a, p in zip(ref, model.parameters()))
    print(f"{CKPT_LAYERS} layers, graph after forward: {plain / 1024:.0f} KiB plain, "
          f"{ck / 1024:.0f} KiB with {CKPT_SEGMENTS} checkpointed segments "
          f"({plain / ck:.1f}x less)")
    print(f"largest gradient difference: {diff}")
    return plain, ck, diff


def item8_no_grad_memory():
    """Inference under no_grad stores no graph."""
    model = _chain()
    x = tg.randn(CKPT_BATCH, CKPT_WIDTH)
    train = saved_bytes(model(x))
    with tg.no_grad():
        out = model(x)
    print(f"graph held by one forward: {train / 1024:.0f} KiB with grad, "
          f"{saved_bytes(out)} bytes under no_grad (grad_fn = {out.grad_fn})")
    return train, saved_bytes(out)


# ---- 9. why is this parameter's grad None? -------------------------------------------------
def _here(text):
    """Sites print as this file's name, not its absolute path (the output is quoted)."""
    return text.replace(os.path.dirname(os.path.abspath(__file__)) + os.sep, "")


class BuggyNet(nn.Module):
    """Four ways to lose a gradient in one model."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(3, 8)
        self.body = nn.Linear(8, 8)
        self.head = nn.Linear(8, 1)
        self.aux_head = nn.Linear(8, 1)           # built, never called
        self.norm_scale = nn.Linear(8, 8)
        self.norm_scale.requires_grad_(False)     # frozen on purpose
        self.adapters = [nn.Linear(8, 8)]         # a plain list: not registered

    def forward(self, x):
        h = self.embed(x).tanh()
        h = h.detach()                            # the bug: embed is cut off
        h = self.adapters[0](self.body(h).relu())
        return self.head(self.norm_scale(h))


def item9_why_no_grad():
    """tg.autograd.why_no_grad names the cause of every grad-None parameter."""
    tg.manual_seed(SEED)
    model = BuggyNet()
    opt = tg.optim.SGD(model.named_parameters(), lr=0.1)
    loss = model(tg.randn(4, 3)).pow(2).mean()
    loss.backward()
    report = tg.autograd.why_no_grad(model)          # the tool
    print(_here(str(report)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        opt.step()                                    # the first step warns, once
    print("the first optimizer.step() warns (once):")
    print(_here(str(caught[0].message)))
    return report, [str(w.message) for w in caught]


# ---- 10. the freed graph: a hidden state carried over ----------------------------------------
def _rnn_loop(cell, xs, detach):
    h = tg.zeros(1, cell.hidden_size)
    for x in xs:
        if detach:
            h = h.detach()                        # the fix: cut at the step boundary
        h = cell(x, h)
        loss = h.pow(2).sum()
        loss.backward()


def item10_freed_graph():
    """Backward through a hidden state carried over from the previous step."""
    tg.manual_seed(SEED)
    cell = nn.RNNCell(3, 4)
    xs = [tg.randn(1, 3) for _ in range(3)]
    for anomaly in (False, True):
        # detect_anomaly's "Anomaly Detection has been enabled" warning is not the point here
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                with tg.autograd.detect_anomaly() if anomaly else contextlib.nullcontext():
                    _rnn_loop(cell, xs, detach=False)
            except RuntimeError as e:
                msg = _here(str(e))
        # the whole message once (PyTorch's first line, then tapegrad's); under anomaly
        # mode only tapegrad's line, which changes (it gains the file:line of each op)
        print("under detect_anomaly(), the last line: " + msg.split("\n")[-1] if anomaly
              else msg)
    _rnn_loop(cell, xs, detach=True)
    print("with h = h.detach() at each step: 3 steps, no error")
    return msg


ITEMS = [item1_clamped_loss, item2_nonscalar_backward, item3_graph_cuts, item4_roles,
         item5_vanishing_exploding, item6_nan_blame, item7_checkpoint_memory,
         item8_no_grad_memory, item9_why_no_grad, item10_freed_graph]


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    picks = [int(a) for a in argv] or range(1, len(ITEMS) + 1)
    for k in picks:
        fn = ITEMS[k - 1]
        print(f"== {k}. {fn.__doc__.splitlines()[0]}")
        fn()
        print()


if __name__ == "__main__":
    main()
