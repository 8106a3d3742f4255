"""The `tapegrad` command line: a short training run on the offline MNIST sample beats
80% test accuracy, writes metrics.json / curves.png / a checkpoint that `tapegrad eval`
reloads with the same accuracy; bad input gives one line and a non-zero exit."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest
import torch  # noqa: F401  (the suite's oracle; imported so a missing torch fails loudly)

import tapegrad as tg
from tapegrad import cli
from tapegrad.data import mnist as mnist_data

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One 2-epoch run on the sample (shared by the tests below)."""
    out = tmp_path_factory.mktemp("run")
    argv = ["train", "mnist", "--data", "sample", "--epochs", "2", "--batch-size", "64",
            "--out", str(out), "--no-progress", "--seed", "1"]
    return out, cli.main(argv)


def test_two_epochs_on_sample_beat_80_percent(run, capsys):
    out, code = run
    assert code == 0
    m = json.loads((out / "metrics.json").read_text())
    assert m["data_source"]["name"] == "mnist-sample"
    assert m["data_source"]["n_train"] == 4000 and m["data_source"]["n_test"] == 1000
    for key in ["train_loss", "test_loss", "test_accuracy", "seconds", "train_accuracy"]:
        assert len(m[key]) == 2, key
    assert m["test_accuracy"][-1] > 0.80
    assert m["train_loss"][1] < m["train_loss"][0]
    assert m["config"]["epochs"] == 2 and m["config"]["optimizer"] == "adam"
    assert m["config"]["model"] == "mlp" and m["config"]["seed"] == 1
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_eval_reloads_checkpoint(run, capsys):
    out, _ = run
    capsys.readouterr()
    assert cli.main(["eval", str(out / "checkpoint.safetensors")]) == 0
    line = capsys.readouterr().out
    acc = json.loads((out / "metrics.json").read_text())["test_accuracy"][-1]
    assert f"accuracy {acc:.2%}" in line and "/1000" in line
    ck = tg.load(out / "checkpoint.safetensors")
    assert ck["task"] == "mnist" and set(ck["model"]) == {"1.weight", "1.bias", "3.weight",
                                                          "3.bias"}
    assert ck["model"]["1.weight"].shape == (256, 784)


def test_checkpoint_weights_reproduce_accuracy(run):
    """Rebuild the MLP by hand from the saved weights: same test accuracy (no magic)."""
    out, _ = run
    ck = tg.load(out / "checkpoint.safetensors")
    _, _, xte, yte = mnist_data.load_mnist_sample()
    x = ((xte.reshape(-1, 784) / 255.0 - 0.1307) / 0.3081)
    w = {k: v.numpy(force=True).astype(np.float64) for k, v in ck["model"].items()}
    h = np.maximum(x @ w["1.weight"].T + w["1.bias"], 0)
    pred = (h @ w["3.weight"].T + w["3.bias"]).argmax(1)
    assert abs((pred == yte).mean() - ck["test_accuracy"]) <= 0.002


def test_same_seed_same_result(run, tmp_path):
    out, _ = run
    argv = ["train", "mnist", "--data", "sample", "--epochs", "1", "--out", str(tmp_path),
            "--no-progress", "--seed", "1", "--optimizer", "sgd", "--hidden", "32"]
    assert cli.main(argv) == 0
    a = json.loads((tmp_path / "metrics.json").read_text())
    assert cli.main(argv) == 0
    b = json.loads((tmp_path / "metrics.json").read_text())
    assert a["train_loss"] == b["train_loss"] and a["test_accuracy"] == b["test_accuracy"]
    assert a["config"]["lr"] == 0.05 and a["config"]["hidden"] == [32]


def test_offline_auto_falls_back_with_one_line_notice(tmp_path, monkeypatch, capsys):
    def offline(url, fh, progress=True):
        raise mnist_data.urllib.error.URLError("no network")

    monkeypatch.setattr(mnist_data, "_fetch", offline)
    argv = ["train", "mnist", "--epochs", "1", "--hidden", "16", "--data-dir",
            str(tmp_path / "data"), "--out", str(tmp_path / "out"), "--no-progress"]
    assert cli.main(argv) == 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "offline" in err[0] and "sample" in err[0]
    m = json.loads((tmp_path / "out" / "metrics.json").read_text())
    assert m["data_source"]["name"] == "mnist-sample"
    # --data mnist refuses to fall back
    assert cli.main(argv + ["--data", "mnist"]) == 1
    assert "could not download" in capsys.readouterr().err


def _run_cli(*args):
    return subprocess.run([sys.executable, "-m", "tapegrad", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=60)


def test_bad_flag_via_console_entry_point():
    r = _run_cli("train", "mnist", "--bogus")
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "unrecognized arguments: --bogus" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("args,needle", [
    (["train", "mnist", "--bogus"], "unrecognized arguments: --bogus"),
    (["train", "mnist", "--epochs", "0"], "must be an integer between 1"),
    (["train", "mnist", "--lr", "abc"], "expected a float"),
    (["train", "mnist", "--optimizer", "lbfgs"], "invalid choice"),
    (["train", "cifar"], "invalid choice: 'cifar'"),
    (["eval"], "required: CHECKPOINT"),
    ([], "required"),
])
def test_bad_flags_one_line_nonzero(args, needle, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(args)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err, err


def test_unusable_dirs_and_checkpoints(tmp_path, capsys):
    f = tmp_path / "file"
    f.write_text("x")
    cases = [
        (["train", "mnist", "--data-dir", str(f), "--out", str(tmp_path / "o")],
         "not a directory"),
        (["train", "mnist", "--data", "sample", "--out", str(f)], "not a directory"),
        (["eval", str(tmp_path / "missing.npz")], "does not exist"),
        (["eval", str(f)], "not a tapegrad checkpoint"),
    ]
    tg.save({"w": tg.ones(2)}, tmp_path / "state.npz")
    cases.append((["eval", str(tmp_path / "state.npz")], "not a training checkpoint"))
    for argv, needle in cases:
        assert cli.main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and needle in err, (argv, err)


def _help(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(argv + ["--help"])
    assert exc.value.code == 0
    return capsys.readouterr().out


def test_help_documents_every_flag(capsys):
    text = _help(["train", "mnist"], capsys)
    for flag in ["--model", "--hidden", "--epochs", "--batch-size", "--lr", "--schedule",
                 "--optimizer",
                 "--weight-decay", "--seed", "--data", "--data-dir", "--out",
                 "--no-progress", "--threads"]:
        assert flag in text, flag
    assert "eval" in _help([], capsys)
    assert "CHECKPOINT" in _help(["eval"], capsys)


def test_cli_checkpoint_model_loads_into_torch(run):
    """The README's promise: the CLI's checkpoint is safetensors with torch's key names,
    so PyTorch reads the MLP's weights and computes the same logits."""
    import safetensors.torch
    out, _ = run
    sd = safetensors.torch.load_file(out / "checkpoint.safetensors")
    weights = {k[len("model."):]: v for k, v in sd.items() if k.startswith("model.")}
    twin = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 256), torch.nn.ReLU(),
                               torch.nn.Linear(256, 10))
    twin.load_state_dict(weights, strict=True)
    x = np.random.default_rng(0).standard_normal((5, 1, 28, 28)).astype(np.float32)
    ck = tg.load(out / "checkpoint.safetensors")
    w = {k: v.numpy(force=True) for k, v in ck["model"].items()}
    ours = np.maximum(x.reshape(5, -1) @ w["1.weight"].T + w["1.bias"], 0) @ w["3.weight"].T \
        + w["3.bias"]
    with torch.no_grad():
        np.testing.assert_allclose(twin(torch.from_numpy(x)).numpy(), ours, rtol=1e-4,
                                   atol=1e-5)
