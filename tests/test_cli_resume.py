"""`--resume CKPT` (issue 17, item 4): a run stopped and resumed ends with the same
weights (bit for bit), optimizer state and metrics as the run that never stopped, for
both trainers; bad resume input is one line naming the file. Also `train names`' outputs
(bar, curves.png, metrics.json, final line) and `tapegrad.train.load_model`.

The oracle of a resume is the uninterrupted run of the same command; `load_model` is
checked against PyTorch running the same weights."""
import json
import os

import numpy as np
import pytest
import torch

import tapegrad as tg
from _cli_fixtures import assert_one_line_error, run, train_mnist, words_file
from tapegrad.train import load_model, names as names_task

MNIST = ["train", "mnist", "--data", "sample", "--hidden", "8", "--batch-size", "500",
         "--no-progress"]


def _arrays(tree, prefix=""):
    """{dotted key: ndarray} of every tensor in a loaded checkpoint's nested structure."""
    out = {}
    stack = [(prefix, tree)]
    while stack:
        key, node = stack.pop()
        if isinstance(node, dict):
            stack += [(f"{key}.{k}", v) for k, v in node.items()]
        elif isinstance(node, (list, tuple)):
            stack += [(f"{key}.{i}", v) for i, v in enumerate(node)]
        elif hasattr(node, "shape"):
            out[key] = node.detach().numpy() if hasattr(node, "detach") else np.asarray(node)
    return out


def assert_same_state(a_path, b_path):
    """Model and optimizer state of two checkpoints: the same keys, bit-identical values."""
    a, b = tg.load(a_path), tg.load(b_path)
    for part in ("model", "optimizer"):
        xa, xb = _arrays(a[part]), _arrays(b[part])
        assert xa.keys() == xb.keys() and (xa or part == "optimizer"), part  # SGD: none
        for k in xa:
            assert xa[k].dtype == xb[k].dtype and np.array_equal(xa[k], xb[k]), (part, k)
    assert a["optimizer"]["param_groups"] == b["optimizer"]["param_groups"]
    return a, b


def _metrics(out):
    return json.loads((out / "metrics.json").read_text())


def test_mnist_resume_continues_exactly(tmp_path, capsys):
    """2 epochs straight vs 1 epoch, stop, --resume for 1 more: same weights, same Adam
    state, same per-epoch metrics."""
    assert run(MNIST + ["--epochs", "2", "--out", tmp_path / "a"]) == 0
    assert run(MNIST + ["--epochs", "1", "--out", tmp_path / "b"]) == 0
    ck_b = tmp_path / "b" / "checkpoint.safetensors"
    capsys.readouterr()
    assert run(MNIST + ["--epochs", "2", "--out", tmp_path / "b", "--resume", ck_b]) == 0
    out = capsys.readouterr().out
    assert f"resuming after epoch 1 of {ck_b}" in out
    assert "epoch  1/2" not in out and "epoch  2/2" in out       # epoch 1 is not redone
    a, b = assert_same_state(tmp_path / "a" / "checkpoint.safetensors", ck_b)
    assert a["epochs_done"] == b["epochs_done"] == 2
    ma, mb = _metrics(tmp_path / "a"), _metrics(tmp_path / "b")
    for k in ("train_loss", "train_accuracy", "test_loss", "test_accuracy"):
        assert len(ma[k]) == 2 and ma[k] == mb[k], k
    assert len(mb["seconds"]) == 2 and ma["config"] == mb["config"]
    assert mb["resumed_from"] == {"checkpoint": str(ck_b), "epoch": 1}


def test_mnist_resume_restores_the_shuffle(tmp_path):
    """Without the loader's generator state the second epoch would reuse the first
    epoch's order: a resumed run from a checkpoint whose loader state was replaced by a
    fresh one must end differently (the restore is what makes the test above pass)."""
    ck = train_mnist(str(tmp_path / "b"))
    saved = tg.load(ck)
    fresh = tg.Generator().manual_seed(0).get_state()
    assert saved["resume"]["rng"]["loader"] != fresh
    saved["resume"]["rng"]["loader"] = fresh
    tg.save(saved, tmp_path / "fresh.safetensors")
    assert run(MNIST + ["--epochs", "2", "--out", tmp_path / "a"]) == 0
    assert run(MNIST + ["--epochs", "2", "--out", tmp_path / "c", "--resume",
                        tmp_path / "fresh.safetensors"]) == 0
    assert _metrics(tmp_path / "a")["train_loss"] != _metrics(tmp_path / "c")["train_loss"]


def _interrupt_after(monkeypatch, calls):
    """Ctrl-C on the `calls`+1-th training step of `train names` (its `_loss`)."""
    real, n = names_task._loss, {"k": 0}

    def loss(model, kind, xb, yb):
        if model.training:
            n["k"] += 1
            if n["k"] > calls:
                raise KeyboardInterrupt
        return real(model, kind, xb, yb)
    monkeypatch.setattr(names_task, "_loss", loss)


@pytest.mark.parametrize("model", ["mlp", "gpt"])
def test_names_resume_after_ctrl_c_continues_exactly(model, tmp_path, monkeypatch, capsys):
    """20 steps straight vs Ctrl-C at step 13, then --resume from the checkpoint of the
    evaluation at step 10: same weights, optimizer state (SGD / AdamW with warmup and
    cosine decay) and per-evaluation metrics."""
    words = words_file(str(tmp_path))
    argv = ["train", "names", "--model", model, "--data", words, "--steps", "20",
            "--eval-every", "5", "--samples", "0", "--no-progress", "--n-layer", "1",
            "--n-embd", "8", "--n-head", "2"]
    assert run(argv + ["--out", tmp_path / "a"]) == 0
    ck_b = tmp_path / "b" / "checkpoint.safetensors"
    with monkeypatch.context() as m:
        _interrupt_after(m, 12)
        capsys.readouterr()
        code = run(argv + ["--out", tmp_path / "b"])
    line = assert_one_line_error(code, capsys.readouterr().err, str(ck_b))
    assert code == 130 and "after step 10" in line and f"--resume {ck_b}" in line, line
    assert tg.load(ck_b)["resume"]["counter"] == 10
    assert run(argv + ["--out", tmp_path / "b", "--resume", ck_b]) == 0
    assert_same_state(tmp_path / "a" / "checkpoint.safetensors", ck_b)
    ma, mb = _metrics(tmp_path / "a"), _metrics(tmp_path / "b")
    for k in ("step", "train_loss", "val_loss", "test_loss"):
        assert ma[k] == mb[k], k
    assert ma["step"] == [5, 10, 15, 20] and ma["config"] == mb["config"]
    assert mb["resumed_from"] == {"checkpoint": str(ck_b), "step": 10}


def test_names_outputs_like_mnist(tmp_path, capsys):
    """Bar on stderr, curves.png, metrics.json with per-evaluation lists, final line."""
    words = words_file(str(tmp_path))
    out = tmp_path / "o"
    assert run(["train", "names", "--data", words, "--steps", "40", "--eval-every", "20",
                "--samples", "2", "--out", out]) == 0
    cap = capsys.readouterr()
    assert "steps:" in cap.err and "loss=" in cap.err           # the tqdm bar
    m = _metrics(out)
    assert m["step"] == [20, 40]
    for k in ("train_loss", "val_loss", "seconds"):
        assert len(m[k]) == 2 and all(isinstance(v, float) for v in m[k]), k
    assert m["seconds"][0] <= m["seconds"][1] == m["total_seconds"]
    # the final test loss is the loss of the best-validation model on the test split
    model = load_model(out / "best.safetensors")
    data = names_task._names(words)
    X, Y = names_task._arrays(data, "mlp", 3, "test")
    assert m["test_loss"] == pytest.approx(names_task.split_loss(model, "mlp", X, Y))
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    last = cap.out.strip().splitlines()[-1]
    best = m["best"]
    assert last.startswith(f"final val loss {m['val_loss'][-1]:.4f}; best val loss "
                           f"{best['val_loss']:.4f} at step {best['step']}, its test loss "
                           f"{m['test_loss']:.4f} in "), last
    assert last.endswith(f"wrote {out / 'metrics.json'}, {out / 'curves.png'}, "
                         f"{out / 'checkpoint.safetensors'}, {out / 'best.safetensors'}"), last
    assert run(["train", "names", "--data", words, "--steps", "2", "--samples", "0",
                "--out", out, "--no-progress"]) == 0
    assert capsys.readouterr().err == ""


@pytest.fixture(scope="module")
def cks(tmp_path_factory):
    root = tmp_path_factory.mktemp("resume_bad")
    p = {"root": root, "words": words_file(str(root))}
    p["mnist"] = train_mnist(str(root / "m"))
    assert run(["train", "names", "--data", p["words"], "--steps", "4", "--samples", "0",
                "--no-progress", "--out", root / "n"]) == 0
    p["names"] = str(root / "n" / "checkpoint.safetensors")
    data = open(p["mnist"], "rb").read()
    p["truncated"] = str(root / "truncated.safetensors")
    open(p["truncated"], "wb").write(data[: len(data) // 2])
    p["flipped"] = str(root / "flipped.safetensors")
    open(p["flipped"], "wb").write(data[:-10] + bytes(b ^ 0xFF for b in data[-10:]))
    p["weights_only"] = str(root / "weights.safetensors")
    tg.save(tg.nn.Linear(2, 2).state_dict(), p["weights_only"])
    no_resume = tg.load(p["mnist"])
    del no_resume["resume"]
    p["no_resume"] = str(root / "no_resume.safetensors")
    tg.save(no_resume, p["no_resume"])
    bad_rng = tg.load(p["mnist"])
    bad_rng["resume"]["rng"]["loader"] = {"bit_generator": "PCG64", "state": "x"}
    p["bad_rng"] = str(root / "bad_rng.safetensors")
    tg.save(bad_rng, p["bad_rng"])
    return p


M = MNIST + ["--epochs", "2"]
BAD = [  # (argv before --resume, checkpoint key, what the line must also say)
    (M, "missing", "does not exist"),
    (M, "truncated", "not a valid checkpoint"),
    (M, "flipped", "not a valid checkpoint"),
    (M, "weights_only", "not a training checkpoint"),
    (M, "no_resume", "no resume state"),
    (M, "bad_rng", "random-generator state"),
    (M, "names", "task 'names'"),
    (MNIST + ["--epochs", "2", "--hidden", "16"], "mnist", "--hidden 8"),
    (MNIST + ["--epochs", "2", "--model", "cnn"], "mnist", "--model mlp"),
    (MNIST + ["--epochs", "2", "--lr", "0.1"], "mnist", "--lr"),
    (MNIST + ["--epochs", "1"], "mnist", "--epochs"),
    (["train", "names", "--data", "{words}", "--steps", "4", "--samples", "0",
      "--no-progress"], "names", "nothing to resume"),
    (["train", "names", "--data", "{words}", "--steps", "8", "--samples", "0",
      "--no-progress"], "names", "--steps 4"),
    (["train", "names", "--data", "{words}", "--steps", "8", "--model", "gpt"], "names",
     "--model mlp"),
    (["train", "names", "--data", "{words}", "--steps", "8"], "mnist", "task 'mnist'"),
    (M + ["--nproc", "2"], "mnist", "--nproc 2"),
]


@pytest.mark.parametrize("argv,which,needle", BAD, ids=[f"{b[1]}-{b[2]}" for b in BAD])
def test_bad_resume_input_is_one_line_naming_the_file(argv, which, needle, cks, tmp_path,
                                                      capsys):
    path = cks[which] if which != "missing" else str(tmp_path / "nope.safetensors")
    argv = [str(a).format(words=cks["words"]) for a in argv]
    capsys.readouterr()
    code = run(argv + ["--out", tmp_path / "o", "--resume", path])
    line = assert_one_line_error(code, capsys.readouterr().err, path)
    assert needle in line, line
    assert not os.path.exists(tmp_path / "o" / "checkpoint.safetensors")


def test_load_model_matches_torch_on_the_same_weights(cks):
    """`tapegrad.train.load_model` rebuilds the MLP from the stored config; PyTorch with
    the file's weights (safetensors.torch) gives the same test predictions."""
    from safetensors.torch import load_file

    from tapegrad.data import mnist as mnist_data
    from tapegrad.train import mnist as mnist_task
    path = cks["mnist"]
    model = load_model(path)
    assert not model.training and [m.out_features for m in model if hasattr(
        m, "out_features")] == [8, 10]
    _, (Xte, Yte), _ = mnist_task.load_data("sample")
    with tg.no_grad():
        ours = model(Xte).detach().numpy()
    twin = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 8), torch.nn.ReLU(),
                               torch.nn.Linear(8, 10))
    weights = {k[len("model."):]: v for k, v in load_file(path).items()
               if k.startswith("model.")}
    twin.load_state_dict(weights)
    with torch.no_grad():
        theirs = twin(torch.from_numpy(Xte.numpy())).numpy()
    np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)
    labels = Yte.numpy()
    acc = float((ours.argmax(1) == labels).mean())
    assert acc == float((theirs.argmax(1) == labels).mean())
    assert acc == pytest.approx(tg.load(path)["test_accuracy"], abs=1e-12)
    assert len(labels) == len(mnist_data.load_mnist_sample()[3])
    names_model = load_model(cks["names"])
    assert type(names_model).__name__ == "MakemoreMLP" and not names_model.training


def test_load_model_bad_file_names_it(cks, tmp_path):
    from tapegrad.train.common import CLIError
    for bad in (cks["truncated"], cks["weights_only"], str(tmp_path / "nope")):
        with pytest.raises(CLIError, match=os.path.basename(bad)):
            load_model(bad)


@pytest.mark.parametrize("model", ["mlp", "cnn"])   # cnn: a one-cycle lr schedule
def test_mnist_ctrl_c_names_the_checkpoint_and_resume_finishes_the_run(model, tmp_path,
                                                                       monkeypatch, capsys):
    from tapegrad.train import common
    real, calls = common.train_epoch, {"n": 0}

    def epoch(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return real(*a, **k)
    argv = MNIST + ["--epochs", "2", "--model", model]
    ck = tmp_path / "b" / "checkpoint.safetensors"
    with monkeypatch.context() as m:
        m.setattr(common, "train_epoch", epoch)
        capsys.readouterr()
        code = run(argv + ["--out", tmp_path / "b"])
    line = assert_one_line_error(code, capsys.readouterr().err, str(ck))
    assert code == 130 and "after epoch 1" in line and f"--resume {ck}" in line, line
    assert run(argv + ["--out", tmp_path / "b", "--resume", ck]) == 0
    assert run(argv + ["--out", tmp_path / "a"]) == 0
    assert_same_state(tmp_path / "a" / "checkpoint.safetensors", ck)


def test_one_cycle_run_refuses_a_different_epoch_count(tmp_path, capsys):
    """The one-cycle schedule spans --epochs: resuming with another count is another run."""
    argv = MNIST + ["--model", "cnn"]
    assert run(argv + ["--epochs", "1", "--out", tmp_path / "b"]) == 0
    ck = tmp_path / "b" / "checkpoint.safetensors"
    capsys.readouterr()
    code = run(argv + ["--epochs", "2", "--out", tmp_path / "b", "--resume", ck])
    line = assert_one_line_error(code, capsys.readouterr().err, str(ck))
    assert "epochs" in line, line
