"""The cnn's training recipe (issue 17): its own defaults (Adam, one-cycle lr peaking at
3e-3, batch 64, the hidden-layer architecture stored in the config), flags overriding
them, the mlp unchanged, the schedule stepped once per batch exactly as torch's
OneCycleLR, and checkpoints of the issue-6 cnn (no "arch" in the config) still loading."""
import argparse

import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad import cli
from tapegrad.train import mnist as train_mnist
from tapegrad.train import mnist_models
from tapegrad.train.cnn import MnistCNN


def _args(*argv):
    p = argparse.ArgumentParser()
    train_mnist.add_arguments(p)
    return p.parse_args(list(argv))


def test_cnn_recipe_defaults_and_overrides():
    c = train_mnist._config(_args("--model", "cnn"))
    assert (c["lr"], c["batch_size"], c["schedule"], c["optimizer"]) == (
        3e-3, 64, "onecycle", "adam")
    assert c["arch"] == {"channels": [16, 32], "hidden": 128}
    c = train_mnist._config(_args("--model", "cnn", "--lr", "0.01", "--batch-size", "32",
                                  "--schedule", "constant"))
    assert (c["lr"], c["batch_size"], c["schedule"]) == (0.01, 32, "constant")
    assert train_mnist._config(_args("--model", "cnn", "--optimizer", "sgd"))["lr"] == 0.05
    m = train_mnist._config(_args())                       # the mlp keeps its defaults
    assert (m["lr"], m["batch_size"], m["schedule"]) == (1e-3, 64, "constant")
    assert "arch" not in m


def test_default_cnn_is_the_documented_shape():
    model = mnist_models.build("cnn", {"arch": mnist_models.CNN_ARCH})
    th = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
        torch.nn.Flatten(), torch.nn.Linear(1568, 128), torch.nn.ReLU(),
        torch.nn.Linear(128, 10))
    assert [tuple(p.shape) for p in model.parameters()] == [
        tuple(p.shape) for p in th.parameters()]
    n = sum(p.numel() for p in th.parameters())
    assert n == 206922 == mnist_models.cnn_param_count(mnist_models.CNN_ARCH)
    assert mnist_models.cnn_param_count(mnist_models.CNN_ARCH_ISSUE6) == 20490


def test_onecycle_is_stepped_per_batch_like_torch(tmp_path):
    # 4,000 sample images, batch 1000: 4 steps per epoch, 2 epochs = 8 scheduler steps
    argv = ["train", "mnist", "--data", "sample", "--epochs", "2", "--batch-size", "1000",
            "--hidden", "16", "--schedule", "onecycle", "--lr", "0.01", "--no-progress",
            "--out", str(tmp_path)]
    assert cli.main(argv) == 0
    group = tg.load(str(tmp_path / "checkpoint.safetensors"))["optimizer"]["param_groups"][0]
    p = torch.zeros(1, requires_grad=True)
    opt = torch.optim.Adam([p], lr=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.01, total_steps=8)
    for _ in range(8):
        opt.step()
        sched.step()
    np.testing.assert_allclose(group["lr"], opt.param_groups[0]["lr"], rtol=1e-12)
    np.testing.assert_allclose(group["betas"][0], opt.param_groups[0]["betas"][0],
                               rtol=1e-12)
    # (after the 8th step torch's formula is past its end; the value is never used, but
    # matching it shows there were exactly 8 steps: 7 give 4e-8, a 9th raises in torch)
    assert group["max_lr"] == 0.01 and group["initial_lr"] == pytest.approx(0.01 / 25)


def _issue6_checkpoint(path, **config_changes):
    tg.manual_seed(0)
    model = MnistCNN(hidden=0)                               # 20,490 parameters
    config = train_mnist._config(_args("--model", "cnn", "--data", "sample"))
    del config["arch"]
    config.update(config_changes)
    tg.save({"format": "tapegrad-train", "task": "mnist", "config": config,
             "data_source": "mnist-sample", "epochs_done": 1, "test_accuracy": 0.1,
             "model": model.state_dict(), "optimizer": {}}, str(path))


def test_issue6_checkpoint_without_arch_still_evaluates(tmp_path, capsys):
    _issue6_checkpoint(tmp_path / "old.safetensors")
    assert cli.main(["eval", str(tmp_path / "old.safetensors")]) == 0
    assert "cnn on mnist-sample test set: accuracy" in capsys.readouterr().out


@pytest.mark.parametrize("arch, needle", [
    ({"channels": [16, 32], "hidden": 60000}, "describes a cnn of 94,"),
    ({"channels": [16], "hidden": 0}, "bad cnn architecture"),
    ({"channels": [16, 32], "hidden": "128"}, "bad cnn architecture"),
    ([1, 2], "bad cnn architecture"),
])
def test_checkpoint_with_bad_arch_is_one_line_error(tmp_path, capsys, arch, needle):
    _issue6_checkpoint(tmp_path / "bad.safetensors", arch=arch)
    assert cli.main(["eval", str(tmp_path / "bad.safetensors")]) == 1
    err = capsys.readouterr().err.strip()
    assert needle in err and "not a valid checkpoint" in err and len(err.splitlines()) == 1


def test_a_recipe_batch_size_is_used_when_the_flag_is_absent(monkeypatch):
    monkeypatch.setitem(mnist_models.RECIPES, "cnn", dict(mnist_models.RECIPES["cnn"],
                                                          batch_size=32))
    assert train_mnist._config(_args("--model", "cnn"))["batch_size"] == 32
    assert train_mnist._config(_args("--model", "cnn", "--batch-size", "8"))[
        "batch_size"] == 8
