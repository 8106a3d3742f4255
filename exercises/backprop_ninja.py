"""Exercise: backpropagate through the MLP by hand (makemore part 4, "backprop ninja").

Model (the forward pass is examples/manual_backprop.py's `forward`, chunked into small
steps): embedding C (27, 10), 3 characters -> Linear W1 (30, 64) + b1 -> batch norm
(Bessel's variance) -> tanh -> Linear W2 (64, 27) + b2 -> cross-entropy.

Fill in `manual_backward`: replace each `...` with the gradient of the loss w.r.t. that
tensor, as a NumPy array of the tensor's shape, going backwards through the forward pass
(its line is in the comment). `a[name]` holds the forward values, `P[name]` the
parameters, `d[name]` the gradients you computed above. Then run

    python exercises/backprop_ninja.py

which checks each gradient against autograd's (`tg.testing.compare`) in order and says
which one to fix first. The solution is examples/manual_backprop.py (look only when
you are stuck; the lessons it needs: 6 for the sums of shared values, 10 for the sums
of broadcasts; `--solution` checks it).
"""
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "examples"), str(ROOT / "exercises")]

import tapegrad as tg  # noqa: E402
from tapegrad.data.names import Names, build_windows  # noqa: E402
from manual_backprop import BATCH, BLOCK, EPS, SEED, forward, make_params  # noqa: E402
from check import check, main  # noqa: E402

# the order of the backward pass: the loss's inputs first, the embedding table last
ORDER = ["logprobs", "probs", "counts_sum_inv", "counts_sum", "counts", "norm_logits",
         "logit_maxes", "logits", "h", "W2", "b2", "hpreact", "bngain", "bnraw", "bnbias",
         "bndiff", "bnvar_inv", "bnvar", "bndiff2", "bnmeani", "hprebn", "embcat", "W1",
         "b1", "emb", "C"]


def manual_backward(p, v, Xb, Yb):
    """Every gradient by hand (NumPy arrays), from the loss back to the embedding."""
    a = {k: t.detach().numpy() for k, t in v.items()}
    P = {k: t.detach().numpy() for k, t in p.items()}
    n = Xb.shape[0]
    rows, Y = np.arange(n), Yb.numpy()
    d = {}
    d["logprobs"] = ...        # loss = -logprobs[rows, Y].mean()
    d["probs"] = ...           # logprobs = log(probs)
    d["counts_sum_inv"] = ...  # probs = counts * counts_sum_inv        (a (n, 1) column)
    d["counts_sum"] = ...      # counts_sum_inv = counts_sum ** -1
    d["counts"] = ...          # counts is used twice: in probs and in counts_sum = counts.sum(1)
    d["norm_logits"] = ...     # counts = exp(norm_logits)
    d["logit_maxes"] = ...     # norm_logits = logits - logit_maxes     (broadcast over columns)
    d["logits"] = ...          # used twice: in norm_logits and in logit_maxes = logits.max(1)
    d["h"] = ...               # logits = h @ W2 + b2
    d["W2"] = ...
    d["b2"] = ...
    d["hpreact"] = ...         # h = tanh(hpreact)
    d["bngain"] = ...          # hpreact = bngain * bnraw + bnbias      (bngain is (1, H))
    d["bnraw"] = ...
    d["bnbias"] = ...
    d["bndiff"] = ...          # bnraw = bndiff * bnvar_inv              (first use of bndiff)
    d["bnvar_inv"] = ...
    d["bnvar"] = ...           # bnvar_inv = (bnvar + EPS) ** -0.5
    d["bndiff2"] = ...         # bnvar = 1/(n-1) * bndiff2.sum(0, keepdims=True)
    d["bndiff"] = ...          # bndiff2 = bndiff ** 2                   (second use: add it)
    d["bnmeani"] = ...         # bndiff = hprebn - bnmeani
    d["hprebn"] = ...          # used twice: in bndiff and in bnmeani = 1/n * hprebn.sum(0)
    d["embcat"] = ...          # hprebn = embcat @ W1 + b1
    d["W1"] = ...
    d["b1"] = ...
    d["emb"] = ...             # embcat = emb.reshape(n, -1)
    d["C"] = ...               # emb = C[Xb]: a row of C used several times gets the sum
    return d


def run(backward=manual_backward):
    """Forward, autograd's backward, `backward` by hand; check every gradient."""
    data = Names("first")
    Xtr, Ytr = build_windows(data.splits["train"], BLOCK)
    ix = np.random.default_rng(SEED).integers(0, len(Xtr), BATCH)
    Xb, Yb = tg.tensor(Xtr[ix]), tg.tensor(Ytr[ix])
    p = make_params()
    loss, v = forward(p, Xb, Yb)
    loss.backward()
    print(f"loss {loss.item():.6f} (batch of {BATCH}, eps {EPS})")
    d = backward(p, v, Xb, Yb)
    return check(d, {name: p[name] if name in p else v[name] for name in ORDER}, ordered=True)


if __name__ == "__main__":
    main(run, manual_backward, "examples/manual_backprop.py", "manual_backward")
