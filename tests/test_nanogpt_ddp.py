"""nanoGPT's train.py DDP path on CPU (`backend='gloo'`, `device='cpu'`) under
`tapegrad launch --nproc 2`, with PyTorch as the oracle.

CI has no network, so nanoGPT's own files are not stored here: the rank script
tests/dist_scripts/nanogpt_train.py (with nanogpt_model.py) is train.py/model.py written
in their style with `import tapegrad as torch`, exercising every API train.py's DDP path
calls (listed in its docstring). The real train.py, model.py and configurator.py
(karpathy/nanoGPT 3adf61e) were run by hand the same way with `import torch` resolving
to tapegrad; the one edit they need on a CPU machine (train.py's DDP branch calls
torch.cuda.set_device unconditionally, which fails under PyTorch too) is kept in the
rank script and described there.

The data set is made as nanoGPT's data/shakespeare_char/prepare.py makes it: a text's
characters mapped to ints, uint16 train.bin / val.bin (90/10) and a meta.pkl with
vocab_size, stoi and itos.
"""
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
import torch

import tapegrad as tg

from _dist_launch import ROOT, SCRIPTS, TIMEOUT, assert_ok, launch

sys.path.insert(0, SCRIPTS)
from nanogpt_model import GPTConfig, gpt_module  # noqa: E402

TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, "
        "speak.\n\nFirst Citizen:\nYou are all resolved rather to die than to famish?\n\n"
        "All:\nResolved. resolved.\n\n") * 40

# the brief's sizes; learning rate and warmup so that 20 iterations visibly learn
ARGS = ["--dataset=tiny", "--backend=gloo", "--device=cpu", "--dtype=float32",
        "--eval_interval=10", "--eval_iters=4", "--log_interval=5", "--n_layer=2",
        "--n_head=2", "--n_embd=32", "--block_size=32", "--batch_size=4",
        "--gradient_accumulation_steps=4", "--learning_rate=0.01", "--warmup_iters=2",
        "--lr_decay_iters=30", "--out_dir=out"]


def prepare(root):
    """data/tiny/{train.bin, val.bin, meta.pkl}, as nanoGPT's prepare.py writes them."""
    chars = sorted(set(TEXT))
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    n = len(TEXT)
    d = root / "data" / "tiny"
    d.mkdir(parents=True)
    np.array([stoi[c] for c in TEXT[:int(n * 0.9)]], dtype=np.uint16).tofile(d / "train.bin")
    np.array([stoi[c] for c in TEXT[int(n * 0.9):]], dtype=np.uint16).tofile(d / "val.bin")
    with open(d / "meta.pkl", "wb") as f:
        pickle.dump({"vocab_size": len(chars), "itos": itos, "stoi": stoi}, f)
    return len(chars)


def _losses(stdout, step):
    line = next(ln for ln in stdout.splitlines() if ln.startswith(f"step {step}: "))
    train, val = line.split("train loss ")[1].split(", val loss ")
    return float(train), float(val)


def _to_torch(obj):
    if isinstance(obj, tg.Tensor):
        return torch.from_numpy(obj.detach().numpy().copy())
    if isinstance(obj, dict):
        return {k: _to_torch(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_to_torch(v) for v in obj)
    return obj


def check_checkpoint_against_torch(path, vocab_size, iters, compiled, data_dir):
    """The checkpoint is nanoGPT's dict; loaded into torch's model and AdamW it gives
    the same loss and the same next step as tapegrad's model and AdamW loaded from it."""
    ck = tg.load(str(path))
    assert sorted(ck) == ["best_val_loss", "config", "iter_num", "model", "model_args",
                          "optimizer"]
    assert ck["iter_num"] == iters
    assert ck["model_args"] == dict(n_layer=2, n_head=2, n_embd=32, block_size=32,
                                    bias=False, vocab_size=vocab_size, dropout=0.0)
    assert ck["config"]["compile"] is compiled and ck["config"]["backend"] == "gloo"
    assert ck["config"]["gradient_accumulation_steps"] == 4   # before the DDP division
    assert not any(k.startswith("module.") for k in ck["model"])
    # a compiled model's state_dict carries torch.compile's prefix; nanoGPT's resume strips it
    assert all(k.startswith("_orig_mod.") for k in ck["model"]) is compiled
    unwanted_prefix = "_orig_mod."
    for k, v in list(ck["model"].items()):
        if k.startswith(unwanted_prefix):
            ck["model"][k[len(unwanted_prefix):]] = ck["model"].pop(k)
    cfg = GPTConfig(**ck["model_args"])
    ours, theirs = gpt_module(tg)(cfg), gpt_module(torch)(cfg)
    ours.load_state_dict(ck["model"])
    theirs.load_state_dict(_to_torch(ck["model"]), strict=True)
    opt_ours = ours.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")
    opt_theirs = theirs.configure_optimizers(0.1, 1e-3, (0.9, 0.95), "cpu")
    opt_ours.load_state_dict(ck["optimizer"])
    opt_theirs.load_state_dict(_to_torch(ck["optimizer"]))
    assert opt_theirs.state_dict()["state"][0]["step"].item() == iters
    val = np.fromfile(data_dir / "val.bin", dtype=np.uint16).astype(np.int64)
    x = np.stack([val[i:i + 32] for i in (0, 7, 20)])
    y = np.stack([val[i + 1:i + 33] for i in (0, 7, 20)])
    _, lo = ours(tg.from_numpy(x), tg.from_numpy(y))
    _, lt = theirs(torch.from_numpy(x), torch.from_numpy(y))
    np.testing.assert_allclose(lo.item(), lt.item(), rtol=1e-5)
    assert float(ck["best_val_loss"]) < 3.0                 # below the uniform 3.2 nats
    lo.backward()
    lt.backward()
    opt_ours.step()
    opt_theirs.step()
    for name, p in theirs.named_parameters():
        np.testing.assert_allclose(dict(ours.named_parameters())[name].detach().numpy(),
                                   p.detach().numpy(), rtol=1e-4, atol=1e-6, err_msg=name)


def test_nanogpt_train_ddp_two_ranks(tmp_path):
    vocab = prepare(tmp_path)
    p = launch(2, "nanogpt_train.py", *ARGS, "--compile=False", "--max_iters=20",
               cwd=tmp_path)
    assert_ok(p, 2)
    out = p.stdout
    # every rank prints this (train.py does); 4 accumulation steps split over 2 ranks
    assert out.count("tokens per iteration will be: 512") == 2
    assert out.count(f"found vocab_size = {vocab} (inside data/tiny/meta.pkl)") == 2
    assert out.count("using fused AdamW: False (fused available: True)") == 2
    assert out.count("gradients at iter 1 match torch on 4 micro-batches") == 2
    for step in (0, 10, 20):                                   # master only
        assert out.count(f"step {step}: train loss") == 1
    assert out.count("saving checkpoint to out") == 2           # steps 10 and 20
    assert _losses(out, 20)[1] < _losses(out, 0)[1] - 0.5
    check_checkpoint_against_torch(tmp_path / "out" / "ckpt.pt", vocab, 20, False,
                                   tmp_path / "data" / "tiny")


def test_nanogpt_train_ddp_two_ranks_compiled(tmp_path):
    vocab = prepare(tmp_path)
    p = launch(2, "nanogpt_train.py", *ARGS, "--compile=True", "--max_iters=20",
               cwd=tmp_path)
    assert_ok(p, 2)
    assert p.stdout.count("compiling the model") == 2
    assert p.stdout.count("gradients at iter 1 match torch on 4 micro-batches") == 2
    check_checkpoint_against_torch(tmp_path / "out" / "ckpt.pt", vocab, 20, True,
                                   tmp_path / "data" / "tiny")


def test_nanogpt_single_process_then_ddp_resume(tmp_path):
    # no RANK in the environment: train.py's non-DDP branch, one process, no MPI
    vocab = prepare(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK")}
    env["PYTHONPATH"] = ROOT + os.pathsep + env.get("PYTHONPATH", "")
    p = subprocess.run([sys.executable, os.path.join(SCRIPTS, "nanogpt_train.py"), *ARGS,
                        "--compile=False", "--max_iters=10", "--dtype=float16",
                        "--check_iter=-1"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("tokens per iteration will be: 512") == 1 and "OK 0" in p.stdout
    # dtype float16 on a CPU machine: train.py's GradScaler(enabled=True) warns and
    # disables itself, as torch's does
    assert "GradScaler is enabled, but CUDA is not available.  Disabling." in p.stderr
    assert tg.load(str(tmp_path / "out" / "ckpt.pt"))["iter_num"] == 10

    # resume on 2 ranks: the model, optimizer, iter_num and best_val_loss come from the
    # checkpoint; the accumulation steps are split over the ranks (same 512 tokens)
    p = launch(2, "nanogpt_train.py", *ARGS, "--compile=False", "--max_iters=20",
               "--init_from=resume", "--check_iter=11", cwd=tmp_path)
    assert_ok(p, 2)
    assert p.stdout.count("Resuming training from out") == 2
    assert p.stdout.count("tokens per iteration will be: 512") == 2
    assert p.stdout.count("gradients at iter 11 match torch on 4 micro-batches") == 2
    assert "step 0:" not in p.stdout and p.stdout.count("step 10: train loss") == 1
    assert p.stdout.count("step 20: train loss") == 1
    check_checkpoint_against_torch(tmp_path / "out" / "ckpt.pt", vocab, 20, False,
                                   tmp_path / "data" / "tiny")
