"""`tapegrad train names` on a practitioner's first day: BLAS threads pinned by
--threads (default 1) and the allocator setting, as train mnist; the best-validation
weights kept (best.safetensors: the final test loss and the samples use them); and a
`--resume CKPT` without --out continuing in the checkpoint's own directory (both
trainers), never in the default run directory."""
import json
import os

import pytest

import tapegrad as tg
from _cli_fixtures import run, words_file
from tapegrad.train import common, load_model, mnist, names as names_task

from test_cli_resume import MNIST, _interrupt_after

SMALL = ["--steps", "40", "--eval-every", "5", "--samples", "3", "--no-progress",
         "--lr", "0.5"]


def _spy_threads(monkeypatch):
    seen = {"threads": [], "alloc": 0}
    real = common.blas_threads

    def blas_threads(n):
        seen["threads"].append(n)
        return real(n)
    monkeypatch.setattr(common, "blas_threads", blas_threads)
    monkeypatch.setattr(names_task, "keep_freed_memory",
                        lambda: seen.__setitem__("alloc", seen["alloc"] + 1))
    return seen


@pytest.mark.parametrize("flag,want", [([], 1), (["--threads", "3"], 3),
                                       (["--threads", "0"], 0)])
def test_names_pins_blas_threads_and_the_allocator_like_mnist(tmp_path, monkeypatch, flag,
                                                             want):
    seen = _spy_threads(monkeypatch)
    words = words_file(str(tmp_path))
    assert run(["train", "names", "--data", words, "--steps", "2", "--samples", "0",
                "--no-progress", "--out", tmp_path / "o", *flag]) == 0
    assert seen == {"threads": [want], "alloc": 1}
    # the same flag as train mnist's: same default and range
    names_p, mnist_p = (tg_parser_action(task) for task in (names_task, mnist))
    assert (names_p.default, names_p.metavar) == (mnist_p.default, mnist_p.metavar) == (1, "T")
    assert run(["train", "names", "--data", words, "--threads", "-1"]) == 2


def tg_parser_action(task):
    import argparse
    p = argparse.ArgumentParser()
    task.add_arguments(p)
    return next(a for a in p._actions if a.dest == "threads")


def test_names_keeps_the_best_validation_checkpoint(tmp_path, capsys):
    words = words_file(str(tmp_path))
    out = tmp_path / "o"
    # 40 steps at a high rate on 60 words: validation gets worse after its best point
    assert run(["train", "names", "--data", words, "--out", out, *SMALL]) == 0
    m = json.loads((out / "metrics.json").read_text())
    best_i = min(range(len(m["val_loss"])), key=m["val_loss"].__getitem__)
    assert best_i < len(m["val_loss"]) - 1, m["val_loss"]   # the run's end is not its best
    assert m["best"] == {"step": m["step"][best_i], "val_loss": m["val_loss"][best_i],
                         "checkpoint": str(out / "best.safetensors")}
    best = tg.load(out / "best.safetensors")
    assert best["step"] == m["step"][best_i] and "optimizer" not in best
    data = names_task._names(words)
    X, Y = names_task._arrays(data, "mlp", 3, "test")
    for name, want_equal in (("best.safetensors", True), ("checkpoint.safetensors", False)):
        loss = names_task.split_loss(load_model(out / name), "mlp", X, Y)
        assert (loss == pytest.approx(m["test_loss"], rel=1e-6)) is want_equal, name
    Xv, Yv = names_task._arrays(data, "mlp", 3, "val")
    assert names_task.split_loss(load_model(out / "best.safetensors"), "mlp", Xv, Yv) == \
        pytest.approx(m["val_loss"][best_i], rel=1e-6)
    capsys.readouterr()
    assert run(["sample", out / "best.safetensors", "-n", "2"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_names_resume_without_out_continues_in_the_checkpoints_directory(
        tmp_path, monkeypatch, capsys):
    words = words_file(str(tmp_path))
    run_dir = tmp_path / "mine"
    argv = ["train", "names", "--data", words, "--steps", "20", "--eval-every", "5",
            "--samples", "0", "--no-progress"]
    with monkeypatch.context() as m:
        _interrupt_after(m, 12)
        assert run(argv + ["--out", run_dir]) == 130
    monkeypatch.chdir(tmp_path)        # the default run directory would be here
    assert run(argv + ["--resume", run_dir / "checkpoint.safetensors"]) == 0
    assert not (tmp_path / "runs").exists(), os.listdir(tmp_path)
    metrics = json.loads((run_dir / "metrics.json").read_text())
    assert metrics["step"] == [5, 10, 15, 20]
    assert metrics["resumed_from"]["step"] == 10
    assert tg.load(run_dir / "checkpoint.safetensors")["resume"]["counter"] == 20


def test_mnist_resume_without_out_continues_in_the_checkpoints_directory(tmp_path,
                                                                         monkeypatch):
    run_dir = tmp_path / "mine"
    assert run(MNIST + ["--epochs", "1", "--out", run_dir]) == 0
    monkeypatch.chdir(tmp_path)
    assert run(MNIST + ["--epochs", "2", "--resume", run_dir / "checkpoint.safetensors"]) == 0
    assert not (tmp_path / "runs").exists(), os.listdir(tmp_path)
    assert len(json.loads((run_dir / "metrics.json").read_text())["train_loss"]) == 2
