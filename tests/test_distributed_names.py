"""tapegrad.distributed's backend names and launch queries against torch.distributed's
(one process, no MPI job): Backend, get_default_backend_for_device,
is_backend_available, get_node_local_rank, is_torchelastic_launched; and the torchrun
variables `tapegrad.distributed.run` sets for each rank."""
import json
import subprocess
import sys

import pytest
import torch
import torch.distributed as tdist

import tapegrad as tg
import tapegrad.distributed as dist
from tapegrad.distributed import run


@pytest.fixture(scope="module")
def torch_builtin_backend_map():
    """torch's device -> backend map as a fresh process has it: importing some of torch's
    own modules (torch.testing._internal.distributed.fake_pg, which another test's import
    may pull in) registers a backend and adds to the live map in this process."""
    code = ("import json, torch.distributed as d; "
            "print(json.dumps(d.Backend.default_device_backend_map))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return json.loads(out.stdout)


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001  compared with torch's
        return (type(e).__name__,)


@pytest.mark.parametrize("name", ["gloo", "GLOO", "Mpi", "nccl", "ucc", "xccl", "custom", 3,
                                  None])
def test_backend_names_as_torch(name, torch_builtin_backend_map):
    a, b = _outcome(lambda: dist.Backend(name)), _outcome(lambda: tdist.Backend(name))
    assert a == b
    if a[0] == "ok":
        assert isinstance(a[1], str)
    assert dist.Backend.GLOO == tdist.Backend.GLOO and dist.Backend.MPI == tdist.Backend.MPI
    assert dist.Backend.default_device_backend_map == torch_builtin_backend_map


@pytest.mark.parametrize("device", ["cpu", "cpu:0", "cuda", "cuda:1", "meta", "mps"])
def test_default_backend_for_device_as_torch(device):
    want = _outcome(lambda: tdist.get_default_backend_for_device(device))
    assert _outcome(lambda: dist.get_default_backend_for_device(device)) == want
    assert _outcome(lambda: dist.get_default_backend_for_device(tg.device(device))) == want \
        or device.startswith(("meta", "mps", "cuda"))  # tg.device knows cpu (and cuda's name)


def test_default_backend_for_device_rejects_none():
    with pytest.raises(TypeError):
        tdist.get_default_backend_for_device(None)
    with pytest.raises(TypeError, match="expected a device or a device string"):
        dist.get_default_backend_for_device(None)


def test_backend_availability():
    assert dist.is_backend_available("gloo") and dist.is_backend_available("mpi")
    assert dist.is_backend_available("cpu:gloo")
    assert not dist.is_backend_available("nccl")
    assert not dist.is_backend_available("cpu:gloo,cuda:nccl")


@pytest.mark.parametrize("env,fallback", [({"LOCAL_RANK": "3"}, None), ({"LOCAL_RANK": "3"}, 1),
                                          ({}, 2), ({}, None)])
def test_node_local_rank_and_torchelastic_as_torch(monkeypatch, env, fallback):
    monkeypatch.delenv("LOCAL_RANK", raising=False)
    monkeypatch.delenv("TORCHELASTIC_RUN_ID", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert (_outcome(lambda: dist.get_node_local_rank(fallback))
            == _outcome(lambda: tdist.get_node_local_rank(fallback)))
    assert dist.is_torchelastic_launched() is tdist.is_torchelastic_launched() is False
    monkeypatch.setenv("TORCHELASTIC_RUN_ID", "abc")
    assert dist.is_torchelastic_launched() is tdist.is_torchelastic_launched() is True


def test_run_sets_torchruns_variables():
    env = {"PMI_RANK": "2", "PMI_SIZE": "3", "MPI_LOCALRANKID": "2", "MPI_LOCALNRANKS": "3"}
    run.set_env(env)
    assert {k: env[k] for k in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE",
                                "GROUP_RANK", "GROUP_WORLD_SIZE", "ROLE_RANK",
                                "ROLE_WORLD_SIZE", "ROLE_NAME", "MASTER_ADDR",
                                "MASTER_PORT", "TORCHELASTIC_RESTART_COUNT")} == {
        "RANK": "2", "WORLD_SIZE": "3", "LOCAL_RANK": "2", "LOCAL_WORLD_SIZE": "3",
        "GROUP_RANK": "0", "GROUP_WORLD_SIZE": "1", "ROLE_RANK": "2", "ROLE_WORLD_SIZE": "3",
        "ROLE_NAME": "default", "MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29500",
        "TORCHELASTIC_RESTART_COUNT": "0"}
    assert "TORCHELASTIC_RUN_ID" in env
    # what the launcher chose (one run id for all ranks, the host file's first machine) stays
    env = {"PMI_RANK": "0", "PMI_SIZE": "1", "MASTER_ADDR": "node7", "TORCHELASTIC_RUN_ID": "x"}
    run.set_env(env)
    assert env["MASTER_ADDR"] == "node7" and env["TORCHELASTIC_RUN_ID"] == "x"


def test_launch_first_host_of_a_hostfile(tmp_path):
    from tapegrad.distributed.launch import _first_host
    f = tmp_path / "hosts"
    f.write_text("# the machines\n\n  node3:2  # first\nnode4:2\n")
    assert _first_host(str(f)) == "node3"
