"""tapegrad.distributed, DistributedDataParallel and DistributedSampler.

The multi-rank tests start their own MPI jobs (`tapegrad launch --nproc N`, i.e.
mpiexec from the `[distributed]` extra, installed by `.[test]`) on the rank scripts in
tests/dist_scripts/, each with a timeout so a hang fails instead of blocking CI. The
rank scripts compare against torch themselves (torch's full-batch gradients, torch's
own DDP over gloo with a file store in the test's tmp dir: no fixed ports) and print
`OK <rank>`; a failed check aborts the job with the rank's traceback.
"""
import os
import subprocess
import sys

import numpy as np
import pytest
import torch.utils.data.distributed as tdd

import tapegrad as tg
import tapegrad.distributed as dist
from tapegrad.utils.data import DistributedSampler

from _dist_launch import ROOT, TIMEOUT, assert_ok, launch


@pytest.mark.parametrize("path", ["shm", "mpi"])
@pytest.mark.parametrize("nproc", [2, 3])
def test_ddp_gradients_equal_full_batch_and_no_sync(nproc, path, tmp_path):
    assert_ok(launch(nproc, "ddp_grads.py", path, cwd=tmp_path), nproc)


@pytest.mark.parametrize("nproc", [1, 2, 3])
def test_ddp_against_torch_ddp_batchnorm_and_unused(nproc, tmp_path):
    p = launch(nproc, "ddp_vs_torch_ddp.py", tmp_path / "torch_store", cwd=tmp_path)
    assert_ok(p, nproc)


def test_collectives_three_ranks(tmp_path):
    assert_ok(launch(3, "collectives.py", cwd=tmp_path), 3)


def _fault_report(p, mode):
    """What is wrong with a fault job's outcome (None: as expected)."""
    if p.returncode == 0:
        return "exit code 0"
    if "finished" in p.stdout:                   # no rank may run on to the end
        return "a rank finished"
    if mode[0] == "raise":
        for line in (f"[rank {mode[1]}] ValueError: injected failure on rank {mode[1]}",
                     f"[rank {mode[1]}] error: this rank failed"):
            if line not in p.stderr:
                return f"missing {line!r} in stderr:\n{p.stderr}"
    elif p.returncode != 3 or "[rank 0] error: this rank exited with code 3" not in p.stderr:
        return f"exit code {p.returncode}, stderr:\n{p.stderr}"
    return None


@pytest.mark.parametrize("nproc", [2, 3])
def test_point_to_point_rooted_and_all_to_all_against_torch_gloo(nproc, tmp_path):
    p = launch(nproc, "p2p_rooted_vs_torch.py", tmp_path / "torch_store", cwd=tmp_path)
    assert_ok(p, nproc)


@pytest.mark.parametrize("nproc,mode", [(2, ["raise", 1]), (3, ["raise", 2]),
                                        (3, ["exit", 0])])
def test_failing_rank_ends_the_job(nproc, mode, tmp_path):
    # NOTE: one retry. Under the full suite on a loaded 2-core machine this failed once
    # in about ten runs and never alone; the report of both attempts shows why if both fail.
    reports = []
    for attempt in range(2):
        p = launch(nproc, "faults.py", *mode, cwd=tmp_path, timeout=120)
        reports.append(_fault_report(p, mode))
        if reports[-1] is None:
            return
    pytest.fail("\n---\n".join(reports))


def test_mismatched_parameter_shapes_fail_at_construction(tmp_path):
    p = launch(2, "faults.py", "shapes", cwd=tmp_path, timeout=120)
    assert p.returncode != 0
    assert ("parameter '0.weight' of rank 1 has shape [7, 4] (float32) but rank 0's "
            "'0.weight' has shape [6, 4]") in p.stderr, p.stderr


def test_monitored_barrier_names_the_late_rank(tmp_path):
    p = launch(3, "faults.py", "monitored", cwd=tmp_path, timeout=120)
    assert p.returncode != 0
    assert "Rank 2 failed to pass monitoredBarrier in 2000 ms" in p.stderr, p.stderr
    assert "passed 0" not in p.stdout


def test_torch_style_script_runs_under_launch(tmp_path):
    p = launch(2, "torch_style_train.py", 3, 2, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert "[CPU0] Epoch 2 | Batchsize: 32 | Steps: 4" in p.stdout      # 256 / 2 / 32
    assert "[CPU1] Epoch 2 | Batchsize: 32 | Steps: 4" in p.stdout
    # only rank 0 saves: epoch 0 and the last
    assert p.stdout.count("Training snapshot saved") == 2
    snap = tg.load(str(tmp_path / "snapshot.pt"))
    assert snap["EPOCHS_RUN"] == 2 and sorted(snap["MODEL_STATE"]) == ["bias", "weight"]
    assert snap["LOSSES"][-1] < snap["LOSSES"][0]


def test_launch_bad_input(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "tapegrad", "launch", "--nproc", "0", "x.py"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=60)
    assert p.returncode == 1 and "--nproc must be >= 1, got 0" in p.stderr
    p = subprocess.run([sys.executable, "-m", "tapegrad", "launch", "--nproc", "2",
                        "missing.py"], cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=60)
    assert p.returncode == 1 and "script missing.py does not exist" in p.stderr


# ---- in-process: no MPI job needed --------------------------------------------------------
def test_not_initialized_errors():
    assert dist.is_available() and not dist.is_initialized()
    assert not dist.is_nccl_available()
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.get_rank()
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.all_reduce(tg.ones(2))
    with pytest.raises(RuntimeError, match="needs CUDA GPUs"):
        dist.init_process_group("nccl")
    with pytest.raises(ValueError, match="unknown backend 'tcp'"):
        dist.init_process_group("tcp")
    with pytest.raises(RuntimeError, match="num_replicas was not given"):
        DistributedSampler(list(range(4)))


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (12, 4, False),
                                                  (2, 3, False), (7, 2, True)])
def test_sampler_matches_torch_without_shuffle(n, replicas, drop_last):
    for r in range(replicas):
        ours = DistributedSampler(list(range(n)), replicas, r, shuffle=False,
                                  drop_last=drop_last)
        theirs = tdd.DistributedSampler(list(range(n)), replicas, r, shuffle=False,
                                        drop_last=drop_last)
        assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("n,replicas", [(100, 2), (101, 3), (7, 4)])
def test_sampler_shards_partition_the_dataset(n, replicas):
    for epoch in range(3):
        shards = []
        for r in range(replicas):
            s = DistributedSampler(range(n), num_replicas=replicas, rank=r, seed=5)
            s.set_epoch(epoch)
            shards.append(list(s))
            assert len(shards[-1]) == len(s) == len(
                tdd.DistributedSampler(range(n), replicas, r))
        flat = sum(shards, [])
        assert sorted(set(flat)) == list(range(n))           # complete
        assert len(flat) - len(set(flat)) == (-n) % replicas    # disjoint up to the padding
    s = DistributedSampler(range(n), replicas, 0, seed=5)
    first = list(s)
    s.set_epoch(1)
    assert list(s) != first or n < 3                          # a new order each epoch
    s.set_epoch(0)
    assert list(s) == first                                   # deterministic
    dl = DistributedSampler(range(n), replicas, 0, drop_last=True)
    assert len(dl) == len(tdd.DistributedSampler(range(n), replicas, 0, drop_last=True))


def test_sampler_bad_rank():
    with pytest.raises(ValueError, match=r"Invalid rank 3, rank should be in the interval \[0, 2\]"):
        DistributedSampler(range(5), num_replicas=3, rank=3)


def _train_mnist(tmp_path, name, *extra):
    env = dict(os.environ, PYTHONPATH=ROOT)
    out = tmp_path / name
    p = subprocess.run([sys.executable, "-m", "tapegrad", "train", "mnist", "--data", "sample",
                        "--out", str(out), "--no-progress", *extra], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stdout + p.stderr
    import json
    return p, json.loads((out / "metrics.json").read_text())


def test_train_mnist_nproc_2_reaches_single_process_accuracy(tmp_path):
    _, one = _train_mnist(tmp_path, "one")
    p, two = _train_mnist(tmp_path, "two", "--nproc", "2")
    assert one["world_size"] == 1 and two["world_size"] == 2
    assert two["config"]["global_batch_size"] == 128
    # one log, from rank 0
    assert p.stdout.count("training mlp") == 1 and p.stdout.count("epoch 10/10") == 1
    assert "batch 64 per rank x 2 ranks = global batch 128" in p.stdout
    assert abs(two["test_accuracy"][-1] - one["test_accuracy"][-1]) <= 0.02, \
        (one["test_accuracy"], two["test_accuracy"])
    # the checkpoint is the plain model's (rank 0's): `tapegrad eval` reloads it
    env = dict(os.environ, PYTHONPATH=ROOT)
    e = subprocess.run([sys.executable, "-m", "tapegrad", "eval",
                        str(tmp_path / "two" / "checkpoint.safetensors")], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=TIMEOUT)
    assert e.returncode == 0 and f"accuracy {two['test_accuracy'][-1]:.2%}" in e.stdout, e


def test_train_names_nproc_2(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-m", "tapegrad", "train", "names", "--steps", "60",
                        "--out", str(tmp_path / "n"), "--nproc", "2", "--samples", "2"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("step     60/60") == 1 and p.stdout.count("samples:") == 1
    assert "32 per rank x 2 ranks = global batch 64" in p.stdout
    import json
    m = json.loads((tmp_path / "n" / "metrics.json").read_text())
    assert m["world_size"] == 2 and m["config"]["global_batch_size"] == 64
    assert m["val_loss"][-1] < m["val_loss"][0]


def test_lesson_08_all_reduced_gradient_is_torch_full_batch_gradient():
    import importlib.util
    import torch
    path = os.path.join(ROOT, "examples", "lesson_08_data_parallel.py")
    spec = importlib.util.spec_from_file_location("_lesson_08", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        res = mod.main()
    model, X, y = mod.problem()
    w = torch.tensor(model.weight.numpy(force=True).copy(), requires_grad=True)
    b = torch.tensor(model.bias.numpy(force=True).copy(), requires_grad=True)
    Xt, yt = torch.tensor(X.numpy(force=True)), torch.tensor(y.numpy(force=True))
    torch.nn.functional.mse_loss(Xt @ w.T + b, yt).backward()
    want = np.concatenate([w.grad.numpy().ravel(), b.grad.numpy().ravel()])
    for r in res["ranks"]:
        np.testing.assert_allclose(r["reduced"], want, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(np.mean([r["local"] for r in res["ranks"]], 0), want,
                               rtol=1e-10)
    assert not np.allclose(res["ranks"][0]["local"], res["ranks"][1]["local"])
