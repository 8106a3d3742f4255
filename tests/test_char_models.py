"""Character-level models: makemore MLP and tiny GPT vs PyTorch from identical weights,
the manual-backprop exercise, short training runs, reproducible sampling."""
import importlib.util
import math
import os

import numpy as np
import pytest
import torch
import torch.nn as tnn
import torch.nn.functional as TF

import tapegrad as tg
from tapegrad.data.names import Names, decode
from tapegrad.train import char_models
from tapegrad.train import names as names_task

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


# ---- PyTorch twins of the models (same parameter names) ----------------------------------
class TorchMLP(tnn.Module):
    def __init__(self, block_size=3, n_embd=10, n_hidden=200, vocab=27):
        super().__init__()
        self.C = tnn.Embedding(vocab, n_embd)
        self.hidden = tnn.Linear(block_size * n_embd, n_hidden, bias=False)
        self.bn = tnn.BatchNorm1d(n_hidden)
        self.out = tnn.Linear(n_hidden, vocab)

    def forward(self, idx):
        emb = self.C(idx)
        return self.out(torch.tanh(self.bn(self.hidden(emb.view(emb.shape[0], -1)))))


class TorchAttn(tnn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.n_head = n_head
        self.c_attn = tnn.Linear(n_embd, 3 * n_embd)
        self.c_proj = tnn.Linear(n_embd, n_embd)

    def forward(self, x):
        B, T, C = x.shape
        q, k, v = self.c_attn(x).split(C, dim=2)
        q, k, v = (t.view(B, T, self.n_head, C // self.n_head).transpose(1, 2) for t in (q, k, v))
        y = TF.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.c_proj(y.transpose(1, 2).reshape(B, T, C))


class TorchBlock(tnn.Module):
    def __init__(self, n_embd, n_head):
        super().__init__()
        self.ln_1 = tnn.LayerNorm(n_embd)
        self.attn = TorchAttn(n_embd, n_head)
        self.ln_2 = tnn.LayerNorm(n_embd)
        self.mlp = tnn.Sequential(tnn.Linear(n_embd, 4 * n_embd), tnn.GELU(),
                                  tnn.Linear(4 * n_embd, n_embd))

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class TorchGPT(tnn.Module):
    def __init__(self, vocab=27, block_size=8, n_layer=2, n_embd=16, n_head=4):
        super().__init__()
        self.wte = tnn.Embedding(vocab, n_embd)
        self.wpe = tnn.Embedding(block_size, n_embd)
        self.blocks = tnn.ModuleList([TorchBlock(n_embd, n_head) for _ in range(n_layer)])
        self.ln_f = tnn.LayerNorm(n_embd)
        self.lm_head = tnn.Linear(n_embd, vocab, bias=False)

    def forward(self, idx):
        x = self.wte(idx) + self.wpe(torch.arange(idx.shape[1]))
        for b in self.blocks:
            x = b(x)
        return self.lm_head(self.ln_f(x))


def _copy_weights(ours, theirs):
    sd = {k: torch.tensor(np.array(v.numpy(force=True))) for k, v in ours.state_dict().items()}
    missing = theirs.load_state_dict(sd, strict=True)
    assert not missing.missing_keys and not missing.unexpected_keys


def _compare_grads(ours, theirs, rtol, atol):
    tgrads = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(force=True), tgrads[name].grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=name)


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 2e-5)])
def test_mlp_matches_torch(dtype, tol):
    tg.manual_seed(1)
    ours = char_models.MakemoreMLP(n_hidden=40).to(getattr(tg, dtype))
    theirs = TorchMLP(n_hidden=40).to(getattr(torch, dtype))
    _copy_weights(ours, theirs)
    idx = np.random.default_rng(0).integers(0, 27, (32, 3))
    y = np.random.default_rng(1).integers(0, 27, 32)
    loss = tg.nn.functional.cross_entropy(ours(tg.tensor(idx)), tg.tensor(y))
    tloss = TF.cross_entropy(theirs(torch.tensor(idx)), torch.tensor(y))
    loss.backward()
    tloss.backward()
    assert abs(loss.item() - tloss.item()) < tol * 10
    _compare_grads(ours, theirs, tol, tol)
    # running statistics after one training-mode step (unbiased running variance)
    np.testing.assert_allclose(ours.bn.running_var.numpy(force=True), theirs.bn.running_var.numpy(),
                               rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype,tol", [("float64", 1e-9), ("float32", 5e-5)])
def test_gpt_matches_torch(dtype, tol):
    tg.manual_seed(2)
    ours = char_models.GPT(block_size=8, n_layer=2, n_embd=16, n_head=4).to(getattr(tg, dtype))
    theirs = TorchGPT(block_size=8, n_layer=2, n_embd=16, n_head=4).to(getattr(torch, dtype))
    _copy_weights(ours, theirs)
    idx = np.random.default_rng(0).integers(0, 27, (5, 8))
    y = np.random.default_rng(1).integers(-1, 27, (5, 8))  # -1 = padding, ignored
    logits = ours(tg.tensor(idx))
    tlogits = theirs(torch.tensor(idx))
    np.testing.assert_allclose(logits.numpy(force=True), tlogits.detach().numpy(), rtol=tol, atol=tol)
    loss = tg.nn.functional.cross_entropy(logits.reshape(-1, 27), tg.tensor(y.reshape(-1)),
                                          ignore_index=-1)
    tloss = TF.cross_entropy(tlogits.reshape(-1, 27), torch.tensor(y.reshape(-1)),
                             ignore_index=-1)
    loss.backward()
    tloss.backward()
    assert abs(loss.item() - tloss.item()) < tol * 10
    _compare_grads(ours, theirs, tol, tol)


@pytest.mark.parametrize("dtype,rtol", [("float64", 1e-9), ("float32", 1e-4)])
def test_gpt_adamw_loss_trajectory_matches_torch(dtype, rtol):
    """The benchmarked GPT step (bench/bench_char.py: 2 layers, n_embd 64, 4 heads, T 16,
    batch 32, cross-entropy, clip_grad_norm_ 1.0, AdamW) for 5 steps from identical
    weights: the same losses as PyTorch's, step by step (gelu's float32 kernel, linear,
    layer norm and attention kernels all take part)."""
    tg.manual_seed(3)
    ours = char_models.GPT(27, 16, n_layer=2, n_embd=64, n_head=4).to(getattr(tg, dtype))
    theirs = TorchGPT(27, 16, n_layer=2, n_embd=64, n_head=4).to(getattr(torch, dtype))
    _copy_weights(ours, theirs)
    rng = np.random.default_rng(5)
    opt = tg.optim.AdamW(ours.parameters(), lr=1e-2)
    topt = torch.optim.AdamW(theirs.parameters(), lr=1e-2)
    losses, tlosses = [], []
    x = rng.integers(0, 27, (32, 16))
    y = rng.integers(0, 27, (32, 16)).reshape(-1)
    for _ in range(5):  # one fixed batch: the loss must fall
        loss = tg.nn.functional.cross_entropy(ours(tg.tensor(x)).reshape(-1, 27), tg.tensor(y))
        opt.zero_grad()
        loss.backward()
        tg.nn.utils.clip_grad_norm_(ours.parameters(), 1.0)
        opt.step()
        tloss = TF.cross_entropy(theirs(torch.tensor(x)).reshape(-1, 27), torch.tensor(y))
        topt.zero_grad()
        tloss.backward()
        torch.nn.utils.clip_grad_norm_(theirs.parameters(), 1.0)
        topt.step()
        losses.append(loss.item())
        tlosses.append(tloss.item())
    np.testing.assert_allclose(losses, tlosses, rtol=rtol)
    assert losses[-1] < losses[0] - 0.05  # it trains (lr 1e-2: a visible step each time)
    _compare_params = {k: v.detach().numpy() for k, v in ours.state_dict().items()}
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(_compare_params[k], v.detach().numpy(), rtol=rtol * 10,
                                   atol=rtol * 10, err_msg=k)


def _load_example(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(ROOT, "examples",
                                                                     f"{name}.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_manual_backprop_exercise():
    ex = _load_example("manual_backprop")
    data = Names("first")
    results, loss, picked = ex.check_exercise(data, verbose=False)
    assert len(results) >= 28 and all(r.approx for r in results.values()), \
        {k: r for k, r in results.items() if not r.approx}
    assert results["logits (fused)"].maxdiff < 1e-8          # worked example 8, float32
    assert results["hprebn (fused)"].maxdiff < 1e-6          # worked example 9
    np.testing.assert_array_equal(picked, np.full(ex.BATCH, -1.0 / ex.BATCH, np.float32))
    assert abs(loss - math.log(27)) < 1.0  # sane initial loss
    manual = ex.train(data, manual=True, steps=150)
    auto = ex.train(data, manual=False, steps=150)
    np.testing.assert_allclose(manual, auto, rtol=1e-4, atol=1e-5)
    assert np.mean(manual[-20:]) < manual[0]


def _run(tmp_path, *argv):
    from tapegrad.cli import main
    words = tmp_path / "words.txt"
    if not words.exists():
        words.write_text("\n".join(Names("first").words[:400]))
    return main(["train", "names", "--data", str(words), "--out", str(tmp_path / "out"),
                 "--samples", "3", *argv])


def test_short_training_lowers_loss_mlp(tmp_path, capsys):
    assert _run(tmp_path, "--model", "mlp", "--steps", "300", "--eval-every", "150") == 0
    import json
    m = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert m["train_loss"][-1] < math.log(27) - 0.5
    assert m["val_loss"][-1] < math.log(27) - 0.3
    assert "samples:" in capsys.readouterr().out


def test_short_training_lowers_loss_gpt(tmp_path):
    assert _run(tmp_path, "--model", "gpt", "--steps", "120", "--eval-every", "60",
                "--n-embd", "16", "--n-head", "2", "--n-layer", "1", "--lr", "1e-2") == 0
    import json
    m = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert m["train_loss"][-1] < math.log(27) - 0.3


def test_sampling_is_reproducible_and_cli_sample(tmp_path, capsys):
    tg.manual_seed(0)
    model = char_models.MakemoreMLP(n_hidden=20)
    a = char_models.sample(model, 5, 3, tg.Generator().manual_seed(7))
    b = char_models.sample(model, 5, 3, tg.Generator().manual_seed(7))
    assert a == b and all(isinstance(decode(w), str) for w in a)
    assert _run(tmp_path, "--model", "mlp", "--steps", "20", "--eval-every", "20") == 0
    from tapegrad.cli import main
    capsys.readouterr()
    ck = str(tmp_path / "out" / "checkpoint.safetensors")
    assert main(["sample", ck, "-n", "4", "--seed", "3"]) == 0
    first = capsys.readouterr().out.split()
    assert main(["sample", ck, "-n", "4", "--seed", "3"]) == 0
    assert capsys.readouterr().out.split() == first and len(first) == 4


def test_word_sequences_pad_and_shift():
    X, Y = names_task.word_sequences(["emma", "al"], 6)
    assert decode(X[0][:5]) == ".emma" and list(Y[0][:5]) == list(X[0][1:5]) + [0]
    assert list(Y[1]) == [1, 12, 0, -1, -1, -1]
