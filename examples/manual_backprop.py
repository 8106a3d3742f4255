"""The manual-backprop exercise (makemore part 4): backpropagate through the MLP by hand.

Model: embedding C (27, 10), block 3 -> Linear W1 (30, 200) + b1 -> batch norm (Bessel's
variance, as in the lecture) -> tanh -> Linear W2 (200, 27) + b2 -> cross-entropy.
The forward pass is broken into small steps so that each one has a local derivative a
learner can write down; the hand-written backward goes through them in reverse, and
`tg.testing.compare` checks every gradient against autograd's.

Then the fused forms (cross-entropy and batch norm):
    dlogits = (softmax(logits) - onehot(y)) / n
    dhprebn = gain * invstd / n * (n*dh - sum(dh) - n/(n-1) * raw * sum(dh * raw))
and finally a training run driven only by the manual gradients, which reaches the same
loss as the same run driven by autograd.
"""
import numpy as np

import tapegrad as tg
from tapegrad.data.names import Names, build_windows
from tapegrad.testing import compare

# ---- configuration -------------------------------------------------------------------
SEED = 42
N_EMBD, N_HIDDEN, BLOCK, BATCH = 10, 64, 3, 32
TRAIN_STEPS = 1000
LR = 0.1
EPS = 1e-5


def make_params(vocab=27):
    """Small random init with nonzero biases and BN params, so no gradient is trivially 0."""
    g = tg.Generator().manual_seed(SEED)
    fan_in = N_EMBD * BLOCK
    p = {
        "C": tg.randn(vocab, N_EMBD, generator=g),
        "W1": tg.randn(fan_in, N_HIDDEN, generator=g) * (5 / 3) / fan_in ** 0.5,
        "b1": tg.randn(N_HIDDEN, generator=g) * 0.1,   # useless under BN, but checked
        "W2": tg.randn(N_HIDDEN, vocab, generator=g) * 0.1,
        "b2": tg.randn(vocab, generator=g) * 0.1,
        "bngain": tg.randn(1, N_HIDDEN, generator=g) * 0.1 + 1.0,
        "bnbias": tg.randn(1, N_HIDDEN, generator=g) * 0.1,
    }
    return {k: v.detach().requires_grad_() for k, v in p.items()}


def forward(p, Xb, Yb):
    """The chunked forward pass; returns the loss and every intermediate (retained)."""
    n = Xb.shape[0]
    v = {}
    v["emb"] = p["C"][Xb]                                          # (n, 3, 10)
    v["embcat"] = v["emb"].reshape(n, -1)                          # (n, 30)
    v["hprebn"] = v["embcat"] @ p["W1"] + p["b1"]                  # (n, H)
    v["bnmeani"] = 1 / n * v["hprebn"].sum(0, keepdim=True)        # (1, H)
    v["bndiff"] = v["hprebn"] - v["bnmeani"]
    v["bndiff2"] = v["bndiff"] ** 2
    v["bnvar"] = 1 / (n - 1) * v["bndiff2"].sum(0, keepdim=True)   # Bessel's correction
    v["bnvar_inv"] = (v["bnvar"] + EPS) ** -0.5
    v["bnraw"] = v["bndiff"] * v["bnvar_inv"]
    v["hpreact"] = p["bngain"] * v["bnraw"] + p["bnbias"]
    v["h"] = v["hpreact"].tanh()                                   # (n, H)
    v["logits"] = v["h"] @ p["W2"] + p["b2"]                       # (n, 27)
    v["logit_maxes"] = v["logits"].max(1, keepdim=True).values
    v["norm_logits"] = v["logits"] - v["logit_maxes"]              # for stability
    v["counts"] = v["norm_logits"].exp()
    v["counts_sum"] = v["counts"].sum(1, keepdim=True)
    v["counts_sum_inv"] = v["counts_sum"] ** -1
    v["probs"] = v["counts"] * v["counts_sum_inv"]
    v["logprobs"] = v["probs"].log()
    loss = -v["logprobs"][tg.arange(n), Yb].mean()
    if loss.requires_grad:
        for t in v.values():
            t.retain_grad()
    return loss, v


def manual_backward(p, v, Xb, Yb):
    """Every gradient by hand (NumPy arrays), from the loss back to the embedding."""
    a = {k: t.detach().numpy() for k, t in v.items()}
    P = {k: t.detach().numpy() for k, t in p.items()}
    n = Xb.shape[0]
    rows, Y = np.arange(n), Yb.numpy()
    d = {}
    d["logprobs"] = np.zeros_like(a["logprobs"])
    d["logprobs"][rows, Y] = -1.0 / n                       # loss = -mean of picked entries
    d["probs"] = (1.0 / a["probs"]) * d["logprobs"]         # log
    d["counts_sum_inv"] = (a["counts"] * d["probs"]).sum(1, keepdims=True)
    d["counts"] = a["counts_sum_inv"] * d["probs"]          # first use of counts
    d["counts_sum"] = -a["counts_sum"] ** -2 * d["counts_sum_inv"]
    d["counts"] = d["counts"] + d["counts_sum"]             # second use: broadcast of a sum
    d["norm_logits"] = a["counts"] * d["counts"]            # exp: the output is the derivative
    d["logit_maxes"] = -d["norm_logits"].sum(1, keepdims=True)
    d["logits"] = d["norm_logits"].copy()
    d["logits"][rows, a["logits"].argmax(1)] += d["logit_maxes"][:, 0]  # max routes to argmax
    d["h"] = d["logits"] @ P["W2"].T
    d["W2"] = a["h"].T @ d["logits"]
    d["b2"] = d["logits"].sum(0)
    d["hpreact"] = (1.0 - a["h"] ** 2) * d["h"]             # tanh, from its output
    d["bngain"] = (a["bnraw"] * d["hpreact"]).sum(0, keepdims=True)
    d["bnraw"] = P["bngain"] * d["hpreact"]
    d["bnbias"] = d["hpreact"].sum(0, keepdims=True)
    d["bndiff"] = a["bnvar_inv"] * d["bnraw"]
    d["bnvar_inv"] = (a["bndiff"] * d["bnraw"]).sum(0, keepdims=True)
    d["bnvar"] = -0.5 * (a["bnvar"] + EPS) ** -1.5 * d["bnvar_inv"]
    d["bndiff2"] = np.ones_like(a["bndiff2"]) / (n - 1) * d["bnvar"]
    d["bndiff"] = d["bndiff"] + 2 * a["bndiff"] * d["bndiff2"]
    d["bnmeani"] = -d["bndiff"].sum(0, keepdims=True)
    d["hprebn"] = d["bndiff"] + np.ones_like(a["hprebn"]) / n * d["bnmeani"]
    d["embcat"] = d["hprebn"] @ P["W1"].T
    d["W1"] = a["embcat"].T @ d["hprebn"]
    d["b1"] = d["hprebn"].sum(0)
    d["emb"] = d["embcat"].reshape(a["emb"].shape)
    d["C"] = np.zeros_like(P["C"])
    np.add.at(d["C"], Xb.numpy(), d["emb"])                    # repeated characters ADD
    return d


def fused_dlogits(logits, Yb):
    """Cross-entropy's gradient in one formula."""
    n = logits.shape[0]
    z = logits - logits.max(1, keepdims=True)
    s = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    s[np.arange(n), Yb] -= 1.0
    return s / n


def fused_dhprebn(bngain, bnvar_inv, bnraw, dhpreact):
    """Batch norm's backward in one formula (Bessel's variance)."""
    n = dhpreact.shape[0]
    return bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0)
                                     - n / (n - 1) * bnraw * (dhpreact * bnraw).sum(0))


def check_exercise(data, verbose=True):
    """Forward, autograd backward, manual backward; compare every tensor. Returns results."""
    Xtr, Ytr = build_windows(data.splits["train"], BLOCK)
    ix = np.random.default_rng(SEED).integers(0, len(Xtr), BATCH)
    Xb, Yb = tg.tensor(Xtr[ix]), tg.tensor(Ytr[ix])
    p = make_params()
    loss, v = forward(p, Xb, Yb)
    loss.backward()
    d = manual_backward(p, v, Xb, Yb)
    results = {}
    if verbose:
        print(f"loss {loss.item():.6f}")
    for name in d:
        t = p[name] if name in p else v[name]
        results[name] = compare(name, d[name], t, verbose=verbose)
    # the fused forms
    dl = fused_dlogits(v["logits"].detach().numpy(), Yb.numpy())
    results["logits (fused)"] = compare("logits (fused)", dl, v["logits"], verbose=verbose)
    dh = fused_dhprebn(p["bngain"].detach().numpy(), v["bnvar_inv"].detach().numpy(), v["bnraw"].detach().numpy(),
                       v["hpreact"].grad.numpy())
    results["hprebn (fused)"] = compare("hprebn (fused)", dh, v["hprebn"], verbose=verbose)
    picked = v["logprobs"].grad.numpy()[np.arange(BATCH), Yb.numpy()]
    return results, loss.item(), picked


def _logits_and_targets(data):
    Xtr, Ytr = build_windows(data.splits["train"], BLOCK)
    ix = np.random.default_rng(SEED).integers(0, len(Xtr), BATCH)
    with tg.no_grad():
        _, v = forward(make_params(), tg.tensor(Xtr[ix]), tg.tensor(Ytr[ix]))
    return v["logits"].detach().numpy(), Ytr[ix]


def train(data, manual, steps=TRAIN_STEPS):
    """SGD driven by manual gradients (manual=True) or by autograd; returns the losses."""
    Xtr, Ytr = build_windows(data.splits["train"], BLOCK)
    rng = np.random.default_rng(SEED)
    p = make_params()
    losses = []
    for step in range(steps):
        ix = rng.integers(0, len(Xtr), BATCH)
        Xb, Yb = tg.tensor(Xtr[ix]), tg.tensor(Ytr[ix])
        if manual:
            with tg.no_grad():
                loss, v = forward(p, Xb, Yb)
            grads = manual_backward(p, v, Xb, Yb)
            grads = {k: grads[k] for k in p}
        else:
            loss, _ = forward(p, Xb, Yb)
            for t in p.values():
                t.grad = None
            loss.backward()
            grads = {k: t.grad.numpy() for k, t in p.items()}
        lr = LR if step < steps * 3 // 4 else LR / 10
        with tg.no_grad():
            for k, t in p.items():
                t.data -= lr * grads[k].reshape(t.shape)
        losses.append(loss.item())
    return losses


def main():
    data = Names("first")
    results, loss, picked = check_exercise(data)
    print(f"all approx: {all(r.approx for r in results.values())}")
    print(f"gradient w.r.t. the picked log-probs: {np.unique(picked)} (= -1/{BATCH} = "
          f"{-1 / BATCH})")
    print("rows of dlogits sum to 0: max |row sum| = "
          f"{np.abs(fused_dlogits(*_logits_and_targets(data)).sum(1)).max():.1e}")
    manual = train(data, manual=True)
    auto = train(data, manual=False)
    print(f"after {TRAIN_STEPS} steps: loss with manual gradients {np.mean(manual[-100:]):.4f},"
          f" with autograd {np.mean(auto[-100:]):.4f}")


if __name__ == "__main__":
    main()
