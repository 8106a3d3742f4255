"""Checkpoints move between tapegrad and PyTorch through safetensors, both ways:
`tg.save(model.state_dict())` -> `safetensors.torch.load_file` -> the torch twin's
`load_state_dict(strict=True)` gives the same outputs, and the reverse; a nanoGPT-style
resume (model + optimizer + config in one file) continues exactly where it stopped."""
import numpy as np
import pytest
import safetensors.torch
import torch

import tapegrad as tg


class TgNet(tg.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = tg.nn.Embedding(10, 6)
        self.body = tg.nn.Sequential(tg.nn.Linear(6, 8), tg.nn.BatchNorm1d(8), tg.nn.Tanh(),
                                     tg.nn.Linear(8, 8))
        self.ln = tg.nn.LayerNorm(8)
        self.head = tg.nn.Linear(8, 3)

    def forward(self, idx):
        return self.head(self.ln(self.body(self.emb(idx))))


class TorchNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = torch.nn.Embedding(10, 6)
        self.body = torch.nn.Sequential(torch.nn.Linear(6, 8), torch.nn.BatchNorm1d(8),
                                        torch.nn.Tanh(), torch.nn.Linear(8, 8))
        self.ln = torch.nn.LayerNorm(8)
        self.head = torch.nn.Linear(8, 3)

    def forward(self, idx):
        return self.head(self.ln(self.body(self.emb(idx))))


IDX = np.array([1, 4, 7, 2, 9, 0])


def _trained_tg(dtype):
    tg.manual_seed(0)
    m = TgNet().to(dtype)
    m.train()
    for _ in range(3):  # move the BatchNorm running stats and num_batches_tracked
        m(tg.tensor(IDX))
    m.eval()
    return m


@pytest.mark.parametrize("dtype, tol", [(tg.float64, 1e-12), (tg.float32, 1e-5)])
def test_tapegrad_checkpoint_loads_into_torch_twin(tmp_path, dtype, tol):
    m = _trained_tg(dtype)
    tg.save(m.state_dict(), tmp_path / "model.safetensors")
    sd = safetensors.torch.load_file(tmp_path / "model.safetensors")
    twin = TorchNet().to(torch.float64 if dtype == tg.float64 else torch.float32)
    twin.load_state_dict(sd, strict=True)
    twin.eval()
    assert int(twin.body[1].num_batches_tracked) == 3
    with torch.no_grad():
        want = twin(torch.from_numpy(IDX)).numpy()
    np.testing.assert_allclose(m(tg.tensor(IDX)).numpy(force=True), want, rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype, tol", [(torch.float64, 1e-12), (torch.float32, 1e-5)])
def test_torch_safetensors_file_loads_into_tapegrad_model(tmp_path, dtype, tol):
    torch.manual_seed(0)
    twin = TorchNet().to(dtype)
    twin.train()
    for _ in range(2):
        twin(torch.from_numpy(IDX))
    twin.eval()
    safetensors.torch.save_file(twin.state_dict(), tmp_path / "torch.safetensors")
    sd = tg.load(tmp_path / "torch.safetensors")
    m = TgNet().to(tg.float64 if dtype == torch.float64 else tg.float32)
    m.load_state_dict(sd, strict=True)
    m.eval()
    assert int(m.body[1].num_batches_tracked.item()) == 2
    with torch.no_grad():
        want = twin(torch.from_numpy(IDX)).numpy()
    got = m(tg.tensor(IDX))
    assert got.dtype == (tg.float64 if dtype == torch.float64 else tg.float32)
    np.testing.assert_allclose(got.numpy(force=True), want, rtol=tol, atol=tol)


def _step(model, opt, x, y):
    loss = tg.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return loss.item()


def test_nanogpt_style_resume_continues_exactly(tmp_path):
    # In the style of nanoGPT's train.py: one checkpoint dict holding the model, the
    # optimizer, the model args and the iteration counters; resume restores all of it.
    x, y = tg.tensor(IDX), tg.tensor(np.array([0, 1, 2, 0, 1, 2]))
    model_args = dict(n_vocab=10, n_embd=6, bias=True, dropout=0.0)

    def fresh():
        tg.manual_seed(1)
        model = TgNet().to(tg.float64)
        return model, tg.optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.95),
                                     weight_decay=0.1)

    ref_model, ref_opt = fresh()
    ref = [_step(ref_model, ref_opt, x, y) for _ in range(6)]

    model, optimizer = fresh()
    for iter_num in range(3):
        _step(model, optimizer, x, y)
    best_val_loss = 1.25
    checkpoint = {
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict(),
        "model_args": model_args,
        "iter_num": iter_num,
        "best_val_loss": best_val_loss,
        "config": {"learning_rate": 1e-2, "compile": False, "wandb_log": None},
    }
    ckpt_path = tmp_path / "ckpt.pt"
    tg.save(checkpoint, ckpt_path)
    del model, optimizer, checkpoint

    checkpoint = tg.load(ckpt_path, map_location="cpu")
    assert checkpoint["model_args"] == model_args and checkpoint["iter_num"] == 2
    model, optimizer = fresh()
    state_dict = checkpoint["model"]
    unwanted_prefix = "_orig_mod."
    for k, v in list(state_dict.items()):
        if k.startswith(unwanted_prefix):
            state_dict[k[len(unwanted_prefix):]] = state_dict.pop(k)
    model.load_state_dict(state_dict)
    optimizer.load_state_dict(checkpoint["optimizer"])
    iter_num, best_val_loss = checkpoint["iter_num"], checkpoint["best_val_loss"]
    resumed = [_step(model, optimizer, x, y) for _ in range(3)]
    np.testing.assert_allclose(resumed, ref[3:], rtol=1e-12)
    for (k, a), b in zip(model.state_dict().items(), ref_model.state_dict().values()):
        np.testing.assert_allclose(a.numpy(force=True), b.numpy(force=True), rtol=1e-12, err_msg=k)
    # The model part of that checkpoint is a torch state dict too (dotted key names).
    sd = {k[len("model."):]: v for k, v in safetensors.torch.load_file(ckpt_path).items()
          if k.startswith("model.")}
    TorchNet().to(torch.float64).load_state_dict(sd, strict=True)


def test_adam_checkpoint_resumes_like_torch(tmp_path):
    # k steps, save/load both optimizers through their own formats, k more steps: the
    # weights agree with torch's run from the same initial weights.
    tg.manual_seed(3)
    m = tg.nn.Linear(4, 2).to(tg.float64)
    t = torch.nn.Linear(4, 2).to(torch.float64)
    with torch.no_grad():
        t.weight.copy_(torch.from_numpy(m.weight.numpy(force=True).copy()))
        t.bias.copy_(torch.from_numpy(m.bias.numpy(force=True).copy()))
    xs = np.random.default_rng(0).standard_normal((6, 5, 4))
    opt = tg.optim.Adam(m.parameters(), lr=0.05)
    topt = torch.optim.Adam(t.parameters(), lr=0.05)
    for i, xv in enumerate(xs):
        if i == 3:
            tg.save({"m": m.state_dict(), "o": opt.state_dict()}, tmp_path / "ck")
            ck = tg.load(tmp_path / "ck")
            m = tg.nn.Linear(4, 2).to(tg.float64)
            m.load_state_dict(ck["m"])
            opt = tg.optim.Adam(m.parameters(), lr=0.05)
            opt.load_state_dict(ck["o"])
        opt.zero_grad()
        (m(tg.tensor(xv)) ** 2).sum().backward()
        opt.step()
        topt.zero_grad()
        (t(torch.from_numpy(xv)) ** 2).sum().backward()
        topt.step()
    np.testing.assert_allclose(m.weight.numpy(force=True), t.weight.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(m.bias.numpy(force=True), t.bias.detach().numpy(), rtol=1e-10)
