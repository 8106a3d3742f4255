"""Programs in the style of Karpathy's makemore / nn-zero-to-hero lectures (bigram
counts, the one-hot neural bigram, the MLP with batch norm and its diagnostics, the
manual-backprop checks), run with torch and with tapegrad; what they print must agree
(tests/_snippets.py). Written for these tests, not copied.
"""
import numpy as np

from _snippets import assert_same_output

WORDS = ["noah", "liam", "lucas", "leo", "mateo", "elias", "hugo", "nora", "lina"]


def _vocab():
    chars = sorted(set("".join(WORDS)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    return stoi, {i: s for s, i in stoi.items()}


def _lin(torch, lo, hi, *shape):
    n = int(np.prod(shape))
    return torch.tensor(np.linspace(lo, hi, n).reshape(shape), dtype=torch.float32)


def _bigram(torch, print):
    F = torch.nn.functional
    stoi, itos = _vocab()
    V = len(stoi)
    N = torch.zeros((V, V), dtype=torch.int32)
    for w in WORDS:
        chs = ["."] + list(w) + ["."]
        for c1, c2 in zip(chs, chs[1:]):
            N[stoi[c1], stoi[c2]] += 1
    print(N[0], N.dtype, N.sum(), N[0, 1].item())
    p = N[0].float()
    p = p / p.sum()
    print(p)
    g = torch.Generator().manual_seed(2147483647)
    ix = torch.multinomial(p, num_samples=1, replacement=True, generator=g).item()
    print(type(ix), 0 <= ix < V)
    P = (N + 1).float()
    P /= P.sum(1, keepdims=True)
    print(P.shape, P[0].sum(), P.sum(1, keepdim=True).shape)
    log_likelihood, n = 0.0, 0
    for w in WORDS:
        chs = ["."] + list(w) + ["."]
        for c1, c2 in zip(chs, chs[1:]):
            log_likelihood += torch.log(P[stoi[c1], stoi[c2]])
            n += 1
    print(f"{log_likelihood=}")
    nll = -log_likelihood
    print(f"{nll=}")
    print(f"{nll/n}")
    xs, ys = [], []
    chs = ["."] + list(WORDS[2]) + ["."]
    for c1, c2 in zip(chs, chs[1:]):
        xs.append(stoi[c1])
        ys.append(stoi[c2])
    xs, ys = torch.tensor(xs), torch.tensor(ys)
    num = xs.nelement()
    xenc = F.one_hot(xs, num_classes=V).float()
    print(xs, ys, num, xenc.shape, xenc.dtype)
    W = _lin(torch, -1, 1, V, V).requires_grad_()
    for _ in range(3):
        logits = xenc @ W
        counts = logits.exp()
        probs = counts / counts.sum(1, keepdims=True)
        loss = -probs[torch.arange(num), ys].log().mean() + 0.01 * (W**2).mean()
        print(loss.item())
        W.grad = None
        loss.backward()
        W.data += -40 * W.grad
    print(probs[torch.arange(4), ys[:4]])


def test_bigram_counts_and_neural_bigram():
    assert_same_output(_bigram)


def _mlp_batchnorm(torch, print):
    F = torch.nn.functional
    stoi, _ = _vocab()
    V = len(stoi)
    block_size = 3
    X, Y = [], []
    for w in WORDS:
        context = [0] * block_size
        for ch in w + ".":
            X.append(context)
            Y.append(stoi[ch])
            context = context[1:] + [stoi[ch]]
    X, Y = torch.tensor(X), torch.tensor(Y)
    print(X.shape, X.dtype, Y.shape, Y.dtype)
    C = _lin(torch, -1, 1, V, 2)
    emb = C[X]
    print(emb.shape, C[5], C[[5, 6, 7]].shape, C[torch.tensor([5, 6, 6])].shape, C[X][13, 2])
    print(torch.cat([emb[:, 0, :], emb[:, 1, :], emb[:, 2, :]], 1).shape,
          torch.cat(torch.unbind(emb, 1), 1).shape, torch.arange(12).view(2, 3, 2))
    W1 = _lin(torch, -0.5, 0.5, 6, 8).requires_grad_()
    b1 = torch.zeros(8, requires_grad=True)
    W2 = _lin(torch, -0.5, 0.5, 8, V).requires_grad_()
    b2 = torch.zeros(V, requires_grad=True)
    bngain = torch.ones((1, 8), requires_grad=True)
    bnbias = torch.zeros((1, 8), requires_grad=True)
    bnmean_running = torch.zeros((1, 8))
    bnstd_running = torch.ones((1, 8))
    parameters = [C.requires_grad_(), W1, b1, W2, b2, bngain, bnbias]
    print(sum(p.nelement() for p in parameters))
    lrs = 10 ** torch.linspace(-3, 0, 4)
    print(lrs)
    lossi, ud = [], []
    for i in range(3):
        ix = torch.arange(i, i + 10)
        emb = C[X[ix]]
        hpreact = emb.view(-1, 6) @ W1 + b1
        bnmeani = hpreact.mean(0, keepdim=True)
        bnstdi = hpreact.std(0, keepdim=True)
        hpreact = bngain * (hpreact - bnmeani) / bnstdi + bnbias
        with torch.no_grad():
            bnmean_running = 0.999 * bnmean_running + 0.001 * bnmeani
            bnstd_running = 0.999 * bnstd_running + 0.001 * bnstdi
        h = torch.tanh(hpreact)
        h.retain_grad()
        logits = h @ W2 + b2
        loss = F.cross_entropy(logits, Y[ix])
        for p in parameters:
            p.grad = None
        loss.backward()
        lr = 0.1 if i < 100000 else 0.01
        for p in parameters:
            p.data += -lr * p.grad
        print(f"{i:7d}/{3:7d}: {loss.item():.4f}")
        lossi.append(loss.log10().item())
        with torch.no_grad():
            ud.append([((lr * p.grad).std() / p.data.std()).log10().item()
                       for p in parameters if p is not b1])
    print(["%.4f" % v for v in lossi], len(ud), len(ud[0]))
    print(h.grad.abs().mean(), (h.abs() > 0.97).float().mean())
    print("mean %+.2f, std %.2f, saturated: %.2f%%" % (
        h.mean().item(), h.std().item(), (h.abs() > 0.97).float().mean().item() * 100))
    hy, hx = torch.histogram(h.detach(), density=True)
    print(hy.shape, hx.shape, hy.sum().item() > 0)
    print(torch.tensor(lossi).view(-1, 1).mean(1))

    @torch.no_grad()
    def split_loss():
        emb = C[X]
        hpre = emb.view(emb.shape[0], -1) @ W1 + b1
        hpre = bngain * (hpre - bnmean_running) / bnstd_running + bnbias
        loss = F.cross_entropy(torch.tanh(hpre) @ W2 + b2, Y)
        print("train", loss.item(), loss.requires_grad)

    split_loss()
    for p in parameters:
        if p is b1:  # (its gradient is rounding noise under batch norm)
            continue
        print("%10s" % tuple(p.shape).__str__(), "mean %+f | std %e | grad:data ratio %e" % (
            p.grad.mean().item(), p.grad.std().item(), (p.grad.std() / p.data.std()).item()))


def test_mlp_with_batchnorm_and_diagnostics():
    assert_same_output(_mlp_batchnorm, rtol=2e-3, atol=1e-6)


def _manual_backprop(torch, print):
    F = torch.nn.functional

    def cmp(s, dt, t):
        ex = torch.all(dt == t.grad).item()
        app = torch.allclose(dt, t.grad)
        maxdiff = (dt - t.grad).abs().max().item()
        print(f"{s:15s} | exact: {str(ex):5s} | approximate: {str(app):5s} | "
              f"maxdiff: {maxdiff < 1e-6}")

    n = 4
    logits = torch.tensor(np.linspace(-2, 2, 20).reshape(4, 5), dtype=torch.float64,
                          requires_grad=True)
    Yb = torch.tensor([1, 4, 0, 2])
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum**-1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()
    for t in [logprobs, probs, counts_sum_inv, counts_sum, counts, norm_logits, logit_maxes]:
        t.retain_grad()
    loss.backward()
    dlogprobs = torch.zeros_like(logprobs)
    dlogprobs[range(n), Yb] = -1.0 / n
    dprobs = (1.0 / probs) * dlogprobs
    dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
    dcounts_sum = (-counts_sum**-2) * dcounts_sum_inv
    dcounts = counts_sum_inv * dprobs + torch.ones_like(counts) * dcounts_sum
    dnorm_logits = counts * dcounts
    dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
    dlogits = dnorm_logits.clone()
    dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
    for name, d, t in [("logprobs", dlogprobs, logprobs), ("probs", dprobs, probs),
                       ("counts_sum_inv", dcounts_sum_inv, counts_sum_inv),
                       ("counts_sum", dcounts_sum, counts_sum), ("counts", dcounts, counts),
                       ("norm_logits", dnorm_logits, norm_logits),
                       ("logit_maxes", dlogit_maxes, logit_maxes), ("logits", dlogits, logits)]:
        cmp(name, d, t)
    d2 = F.softmax(logits, 1)
    d2[range(n), Yb] -= 1
    d2 /= n
    cmp("logits fast", d2, logits)
    hprebn = torch.tensor(np.linspace(-1, 1, 12).reshape(4, 3), dtype=torch.float64)
    print(torch.var(hprebn, 0, keepdim=True, unbiased=True),
          hprebn.var(0, keepdim=True, unbiased=False), 1 / (n - 1) * (hprebn**2).sum(0))


def test_manual_backprop_checks():
    assert_same_output(_manual_backprop, rtol=1e-10)
