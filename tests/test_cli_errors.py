"""Issue 14, "The command line": each listed case gives one line and a non-zero exit.

Checkpoints of the other model kind / other task / malformed, a damaged MNIST archive, a
loss that becomes NaN, run directories of another model, the top-level handler
(unexpected exceptions, Ctrl-C, `--debug`). The checkpoints are real ones from tiny runs,
edited with tg.load / tg.save the way a user's mistake or a damaged disk would.
"""
import gzip
import io
import json
import os
import struct
import sys
import zipfile

import numpy as np
import pytest
import torch  # noqa: F401  (the suite's oracle; a missing torch fails loudly)

import tapegrad as tg
from tapegrad import cli
from tapegrad.data import mnist as mnist_data

from _cli_fixtures import (assert_one_line_error, run, run_subprocess, train_mnist,
                           train_names, words_file)


@pytest.fixture(scope="module")
def cks(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli_errors")
    words = words_file(str(root))
    return {"root": root, "words": words,
            "mlp": train_mnist(str(root / "mlp")),
            "names_mlp": train_names(str(root / "names_mlp"), words),
            "names_gpt": train_names(str(root / "names_gpt"), words, "--model", "gpt",
                                     "--n-embd", "8", "--n-head", "2", "--n-layer", "1")}


def _edited(cks, name, tmp_path, edit):
    """A copy of checkpoint `name` after `edit(ck)` (which changes the dict in place)."""
    ck = tg.load(cks[name])
    edit(ck)
    path = tmp_path / f"edited_{name}.npz"
    tg.save(ck, path)
    return str(path)


def _set(section, key, value):
    def edit(ck):
        if section is None:
            ck[key] = value
        else:
            ck[section][key] = value
    return edit


def _del(section, key):
    def edit(ck):
        del (ck if section is None else ck[section])[key]
    return edit


# (checkpoint, edit, commands that must refuse it) -- all must name the file.
EDITS = [
    # the other model kind: an mlp's weights under a cnn config, and the reverse for names
    ("mlp", _set("config", "model", "cnn"), ["eval"]),
    ("names_mlp", _set("config", "model", "gpt"), ["eval", "sample"]),
    ("names_gpt", _set("config", "model", "mlp"), ["eval", "sample"]),
    # the other task: an MNIST checkpoint labelled `names` and the reverse
    ("mlp", _set(None, "task", "names"), ["eval", "sample"]),
    ("names_mlp", _set(None, "task", "mnist"), ["eval"]),
    ("mlp", _set(None, "task", "cifar"), ["eval", "sample"]),
    ("mlp", _set(None, "task", ["mnist"]), ["eval", "sample"]),
    # malformed configs and state dicts
    ("mlp", _set("config", "hidden", [10 ** 9]), ["eval"]),   # 200 bytes must not build 10^12
    ("mlp", _set("config", "hidden", "abc"), ["eval"]),
    ("mlp", _set("config", "hidden", [0]), ["eval"]),
    ("mlp", _set("config", "hidden", [16]), ["eval"]),       # shapes do not fit
    ("mlp", _set("config", "model", "resnet"), ["eval"]),
    ("mlp", _del("config", "model"), ["eval"]),
    ("mlp", _set(None, "config", [1, 2]), ["eval"]),
    ("mlp", _set(None, "model", "weights"), ["eval"]),
    ("mlp", _set(None, "model", {"1.weight": "abc"}), ["eval"]),
    ("mlp", _del("model", "3.bias"), ["eval"]),
    ("names_mlp", _set("config", "block_size", -3), ["eval", "sample"]),
    ("names_mlp", _set("config", "block_size", 10 ** 9), ["eval", "sample"]),
    ("names_mlp", _set("config", "block_size", "3"), ["eval", "sample"]),
    ("names_mlp", _del("config", "block_size"), ["eval", "sample"]),
    ("names_gpt", _set("config", "n_head", 3), ["eval", "sample"]),
    ("names_gpt", _set("config", "n_embd", 2 ** 20), ["eval", "sample"]),
    ("names_gpt", _set("config", "n_layer", 0), ["eval", "sample"]),
    ("names_mlp", _set("config", "data", 5), ["eval"]),
    ("names_mlp", _set("config", "data", "/nonexistent/words.txt"), ["eval"]),
]


@pytest.mark.parametrize("i", range(len(EDITS)))
def test_eval_and_sample_refuse_wrong_or_malformed_checkpoints(i, cks, tmp_path, capsys):
    name, edit, commands = EDITS[i]
    path = _edited(cks, name, tmp_path, edit)
    for command in commands:
        capsys.readouterr()
        code = run([command, path, "--data", "sample"] if command == "eval" and
                   name == "mlp" else [command, path])
        assert_one_line_error(code, capsys.readouterr().err, path, context=(i, command))


def test_eval_of_other_kind_names_the_problem(cks, tmp_path, capsys):
    path = _edited(cks, "mlp", tmp_path, _set(None, "task", "names"))
    assert run(["eval", path]) == 1
    line = capsys.readouterr().err
    assert line.startswith(f"tapegrad: error: not a valid checkpoint: {path}: ")
    assert "block_size" in line
    path = _edited(cks, "names_gpt", tmp_path, _set("config", "model", "mlp"))
    assert run(["sample", path]) == 1
    assert "mlp" in capsys.readouterr().err


def _damaged_files(cks, tmp_path):
    data = open(cks["mlp"], "rb").read()
    out = {"empty": b"", "text": b"hello\n", "truncated": data[: len(data) // 2],
           "header only": data[:30], "garbage tail": data + b"\x00" * 100,
           "zeros": b"\x00" * 4096, "gzip": gzip.compress(data)}
    for off in (10, 40, len(data) // 3, len(data) - 30):   # a few flipped bits
        b = bytearray(data)
        b[off] ^= 0x10
        out[f"bit flip at {off}"] = bytes(b)
    paths = {}
    for k, v in out.items():
        p = tmp_path / (k.replace(" ", "_") + ".npz")
        p.write_bytes(v)
        paths[k] = str(p)
    return paths


@pytest.mark.parametrize("command", ["eval", "sample"])
def test_damaged_checkpoint_one_line_naming_the_file(command, cks, tmp_path, capsys):
    for kind, path in _damaged_files(cks, tmp_path).items():
        capsys.readouterr()
        code = run([command, path, "--data", "sample"] if command == "eval" else
                   [command, path])
        err = capsys.readouterr().err
        if code == 0:          # a flipped bit in padding may leave the file intact
            continue
        assert_one_line_error(code, err, path, context=kind)
    for path in (str(tmp_path), str(tmp_path / "missing.npz")):   # a directory, missing
        capsys.readouterr()
        assert_one_line_error(run([command, path]), capsys.readouterr().err, path)


def _zip(path, members):
    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return str(path)


def _npy(arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def _manifest(root):
    text = json.dumps({"format": "tapegrad", "version": 1, "root": root})
    return _npy(np.frombuffer(text.encode(), dtype=np.uint8))


def _patch_central_directory(data, offset, value):
    """Set a 2-byte field of every central-directory record (zip "version needed",
    "flags", "compression method") -- what a flipped bit there looks like."""
    b = bytearray(data)
    i = b.find(b"PK\x01\x02")
    while i != -1:
        b[i + offset:i + offset + 2] = struct.pack("<H", value)
        i = b.find(b"PK\x01\x02", i + 4)
    return bytes(b)


def _malformed_files(cks, tmp_path):
    """The issue's malformed checkpoints, built by hand (not through tg.save). The zip
    damage is done to a checkpoint in the old .npz format (which tg.load still reads)."""
    data = open(os.path.join(os.path.dirname(__file__), "data", "checkpoint_v1.npz"), "rb").read()
    assert b"PK\x01\x02" in data  # a zip: the patches below change something
    huge = _npy_header_only("<f8", (2 ** 40,))     # 8 TiB declared, 64 bytes present
    # 3000 nested lists, as text: json.dumps itself cannot write that deep
    deep = '{"t": "list", "items": [' * 3000 + '{"t": "none"}' + "]}" * 3000
    files = {
        "zip version 10.9": _patch_central_directory(data, 6, 109),
        "compression method": _patch_central_directory(data, 10, 99),
        "encrypted": _patch_central_directory(data, 8, 1),
    }
    paths = {}
    for k, v in files.items():
        p = tmp_path / (k.replace(" ", "_") + ".npz")
        p.write_bytes(v)
        paths[k] = str(p)
    paths["member not .npy"] = _zip(tmp_path / "not_npy.npz", {
        "__tapegrad_manifest__.npy": _manifest({"t": "tensor", "a": "a0", "dtype": "<f4",
                                                "shape": [2]}),
        "a0": b"not an array"})
    paths["manifest Infinity"] = _zip(tmp_path / "infinity.npz", {
        "__tapegrad_manifest__.npy": _npy(np.frombuffer(
            b'{"format": "tapegrad", "version": 1, "root": {"t": "int", "v": Infinity}}',
            dtype=np.uint8))})
    paths["3000-deep manifest"] = _zip(tmp_path / "deep.npz", {
        "__tapegrad_manifest__.npy": _npy(np.frombuffer(
            ('{"format": "tapegrad", "version": 1, "root": ' + deep + "}").encode(),
            dtype=np.uint8))})
    paths["shape 2**40"] = _zip(tmp_path / "huge.npz", {
        "__tapegrad_manifest__.npy": _manifest({"t": "tensor", "a": "a0", "dtype": "<f8",
                                                "shape": [2 ** 40]}),
        "a0.npy": huge})
    return paths


def _npy_header_only(descr, shape):
    """An .npy file whose header declares `shape` but which holds (almost) no data."""
    header = repr({"descr": descr, "fortran_order": False, "shape": shape}).encode()
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header + b"\x00" * 64


@pytest.mark.parametrize("command", ["eval", "sample"])
def test_malformed_checkpoints_of_the_issue_one_line_naming_the_file(command, cks, tmp_path,
                                                                     capsys):
    for kind, path in _malformed_files(cks, tmp_path).items():
        capsys.readouterr()
        code = run([command, path, "--data", "sample"] if command == "eval" else
                   [command, path])
        assert_one_line_error(code, capsys.readouterr().err, path, context=kind)


def test_damaged_mnist_archive_is_one_line(tmp_path, monkeypatch, capsys):
    """A cached .gz whose deflate stream is corrupt: today zlib.error escaped. No network
    is used (a fetch, if the data code decides to re-download, fails)."""
    def offline(url, fh, progress=True):
        raise mnist_data.urllib.error.URLError("no network")

    monkeypatch.setattr(mnist_data, "_fetch", offline)
    raw = tmp_path / "data" / "MNIST" / "raw"
    raw.mkdir(parents=True)
    good_header = gzip.compress(b"\x00" * 64)[:10]           # a valid gzip header ...
    for name, _ in mnist_data.RESOURCES:
        (raw / name).write_bytes(good_header + b"\xff" * 200)  # ... then no deflate data
    argv = ["train", "mnist", "--data", "mnist", "--data-dir", str(tmp_path / "data"),
            "--epochs", "1", "--out", str(tmp_path / "out"), "--no-progress"]
    code = run(argv)
    line = assert_one_line_error(code, capsys.readouterr().err)
    assert "MNIST" in line or "idx" in line, line
    assert not (tmp_path / "out" / "checkpoint.safetensors").exists()


def test_nonfinite_loss_stops_mnist_naming_the_step(tmp_path, capsys):
    out = tmp_path / "out"
    code = run(["train", "mnist", "--data", "sample", "--epochs", "3", "--hidden", "8",
                "--lr", "1e30", "--no-progress", "--out", out])
    line = assert_one_line_error(code, capsys.readouterr().err)
    assert "epoch 1/3, step " in line and "lower --lr" in line, line
    assert not (out / "checkpoint.safetensors").exists() and not (out / "metrics.json").exists()


def test_nonfinite_loss_from_weight_decay_says_so(tmp_path, capsys):
    code = run(["train", "mnist", "--data", "sample", "--epochs", "1", "--hidden", "8",
                "--optimizer", "sgd", "--weight-decay", "1e300", "--no-progress",
                "--out", tmp_path / "out"])
    line = assert_one_line_error(code, capsys.readouterr().err)
    assert "epoch 1/1, step " in line and "lower --weight-decay" in line, line


@pytest.mark.parametrize("model", ["mlp", "gpt"])
def test_nonfinite_loss_stops_names_naming_the_step(model, cks, tmp_path, capsys):
    code = run(["train", "names", "--model", model, "--data", cks["words"], "--steps", "200",
                "--lr", "1e30", "--samples", "0", "--n-embd", "8", "--n-head", "2",
                "--no-progress", "--out", tmp_path / "out"])
    line = assert_one_line_error(code, capsys.readouterr().err)
    assert "/200" in line and "at step " in line and "lower --lr" in line, line
    assert not (tmp_path / "out" / "checkpoint.safetensors").exists()


def test_nonfinite_loss_exit_code_in_a_subprocess(tmp_path):
    r = run_subprocess("train", "mnist", "--data", "sample", "--epochs", "1", "--hidden", "8",
                       "--lr", "1e30", "--no-progress", "--out", tmp_path / "o")
    line = assert_one_line_error(r.returncode, r.stderr)
    assert r.returncode == 1 and "step" in line and "--lr" in line


def test_mnist_cnn_does_not_overwrite_the_mlp_run(tmp_path, monkeypatch, capsys):
    """The issue's case: `train mnist` then `train mnist --model cnn` with the defaults."""
    monkeypatch.chdir(tmp_path)
    common = ["train", "mnist", "--data", "sample", "--epochs", "1", "--no-progress",
              "--batch-size", "500"]
    assert run(common + ["--hidden", "8"]) == 0
    assert run(common + ["--model", "cnn"]) == 0
    mlp = json.loads((tmp_path / "runs" / "mnist" / "metrics.json").read_text())
    cnn = json.loads((tmp_path / "runs" / "mnist-cnn" / "metrics.json").read_text())
    assert mlp["config"]["model"] == "mlp" and cnn["config"]["model"] == "cnn"
    assert tg.load(tmp_path / "runs" / "mnist" / "checkpoint.safetensors")["config"]["model"] == "mlp"
    capsys.readouterr()
    # an explicit --out holding the other model's run is refused, and --force overrides
    assert run(common + ["--model", "cnn", "--out", "runs/mnist"]) == 1
    line = capsys.readouterr().err
    assert "runs/mnist" in line and "--model mlp" in line and "--force" in line, line
    assert json.loads((tmp_path / "runs" / "mnist" / "metrics.json").read_text()) == mlp


def test_run_dir_of_another_task_or_unknown_files_needs_force(cks, tmp_path, capsys):
    out = tmp_path / "out"
    train_mnist(str(out))
    argv = ["train", "names", "--data", cks["words"], "--steps", "2", "--samples", "0",
            "--out", out]
    capsys.readouterr()
    line = assert_one_line_error(run(argv), capsys.readouterr().err, str(out))
    assert "tapegrad train mnist" in line and "--force" in line
    assert run(argv + ["--force"]) == 0
    assert tg.load(out / "checkpoint.safetensors")["task"] == "names"
    assert run(argv) == 0                       # the same task and model: a re-run
    other = tmp_path / "other"
    other.mkdir()
    (other / "metrics.json").write_text("my own notes")
    capsys.readouterr()
    line = assert_one_line_error(run(argv[:-1] + [other]), capsys.readouterr().err, str(other))
    assert (other / "metrics.json").read_text() == "my own notes"
    # names: the gpt gets its own default directory
    from tapegrad.train import rundir
    assert rundir.default_out("names", "gpt", "mlp") == os.path.join("runs", "names-gpt")
    assert rundir.default_out("names", "mlp", "mlp") == os.path.join("runs", "names")


def test_negative_seed_is_accepted_as_torch_does(tmp_path, capsys):
    """torch.manual_seed(-1) is the seed 2**64 - 1; so is `--seed -1`."""
    argv = ["train", "mnist", "--data", "sample", "--epochs", "1", "--hidden", "8",
            "--batch-size", "500", "--no-progress", "--force"]
    assert run(argv + ["--seed", "-1", "--out", tmp_path / "a"]) == 0
    assert run(argv + ["--seed", str(2 ** 64 - 1), "--out", tmp_path / "b"]) == 0
    a = json.loads((tmp_path / "a" / "metrics.json").read_text())
    b = json.loads((tmp_path / "b" / "metrics.json").read_text())
    assert a["train_loss"] == b["train_loss"]
    assert torch.manual_seed(-1).initial_seed() == 2 ** 64 - 1


def test_top_k_larger_than_the_vocabulary_means_all(cks, capsys):
    assert run(["sample", cks["names_mlp"], "-n", "3", "--top-k", "1000"]) == 0
    assert run(["sample", cks["names_mlp"], "-n", "0"]) == 0


def test_unexpected_exception_is_one_line_and_debug_shows_it(cks, monkeypatch, capsys):
    from tapegrad.train import names

    def boom(*a, **k):
        raise ValueError("something deep\nbroke")

    monkeypatch.setattr(names, "sample_command", boom)
    assert run(["sample", cks["names_mlp"]]) == 1
    line = assert_one_line_error(1, capsys.readouterr().err)
    assert "ValueError: something deep broke" in line and "--debug" in line
    for argv in (["--debug", "sample", cks["names_mlp"]], ["sample", cks["names_mlp"], "--debug"]):
        with pytest.raises(ValueError, match="something deep"):
            cli.main(argv)


def test_keyboard_interrupt_is_one_line_exit_130(monkeypatch, capsys):
    from tapegrad.train import mnist

    def interrupted(args):
        raise KeyboardInterrupt

    monkeypatch.setattr(mnist, "train", interrupted)
    assert run(["train", "mnist"]) == 130
    assert capsys.readouterr().err == "tapegrad: error: interrupted\n"
    with pytest.raises(KeyboardInterrupt):
        cli.main(["--debug", "train", "mnist"])


def test_debug_traceback_and_interrupt_in_a_subprocess(tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_text("not a checkpoint")
    r = run_subprocess("eval", bad)
    assert_one_line_error(r.returncode, r.stderr, str(bad))
    r = run_subprocess("--debug", "eval", bad)
    assert r.returncode != 0 and "Traceback (most recent call last)" in r.stderr
    code = ("import sys, tapegrad.cli as c, tapegrad.train.mnist as m\n"
            "def stop(args):\n    raise KeyboardInterrupt\n"
            "m.train = stop\nsys.exit(c.main(['train', 'mnist']))\n")
    import subprocess
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=tmp_path, env=dict(os.environ, PYTHONPATH=os.path.dirname(
                           os.path.dirname(os.path.abspath(__file__)))), timeout=120)
    assert r.returncode == 130 and r.stderr == "tapegrad: error: interrupted\n", r.stderr


def test_a_shell_script_stops_at_the_failing_step(tmp_path):
    """How the commands are used in a script or CI job (`set -e`, one command per step,
    as in the README): a NaN run must stop the script, not hand a garbage checkpoint on."""
    import shutil
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    py = sys.executable
    script = (
        "set -e\n"
        f"'{py}' -m tapegrad train mnist --data sample --epochs 1 --hidden 8 "
        "--no-progress --out good\n"
        f"'{py}' -m tapegrad eval good/checkpoint.safetensors\n"
        f"'{py}' -m tapegrad train mnist --data sample --epochs 1 --hidden 8 "
        "--no-progress --lr 1e30 --out bad\n"
        f"'{py}' -m tapegrad eval bad/checkpoint.safetensors\n"
        "echo UNREACHABLE\n")
    r = subprocess.run([shutil.which("bash") or "/bin/bash", "-c", script], cwd=tmp_path,
                       capture_output=True, text=True, timeout=300,
                       env=dict(os.environ, PYTHONPATH=root))
    assert r.returncode == 1 and "UNREACHABLE" not in r.stdout
    assert "good/checkpoint.safetensors: mlp on mnist-sample test set: accuracy" in r.stdout
    assert_one_line_error(r.returncode, r.stderr, "lower --lr")
    assert not (tmp_path / "bad" / "checkpoint.safetensors").exists()
