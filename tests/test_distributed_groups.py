"""dist.new_group (subsets on their own MPI communicators, torch's non-member rules) and
the collective timeout of init_process_group(timeout=...): a rank left waiting longer
than the timeout raises an error naming the collective, which ends the job."""
import re

import pytest

from _dist_launch import assert_ok, launch


def test_new_group_three_ranks(tmp_path):
    assert_ok(launch(3, "groups.py", cwd=tmp_path, timeout=120), 3)


@pytest.mark.parametrize("what,name", [
    ("all_reduce", "all_reduce"),
    ("broadcast_object_list", "broadcast_object_list"),
    ("ddp", "DistributedDataParallel's gradient all_reduce")])
def test_collective_timeout_names_the_collective(what, name, tmp_path):
    p = launch(2, "timeout.py", what, cwd=tmp_path, timeout=120)
    assert p.returncode != 0 and "finished" not in p.stdout, p.stdout + p.stderr
    assert (f"[rank 0] tapegrad.distributed.DistBackendError: {name}: timed out after 2 s "
            "waiting for the other ranks") in p.stderr, p.stderr
    waited = float(re.search(r"rank 0 waited ([\d.]+) s", p.stdout).group(1))
    assert 2.0 <= waited < 6.0, waited          # the timeout, not rank 1's 60 s sleep
    assert p.seconds < 40, p.seconds


def test_groups_before_init_process_group():
    import tapegrad.distributed as dist
    assert dist.group.WORLD is None and dist.GroupMember.WORLD is None
    assert dist.GroupMember.NON_GROUP_MEMBER == -100
    with pytest.raises(RuntimeError, match="new_group: Default process group has not been "
                                           "initialized"):
        dist.new_group([0])
    with pytest.raises(RuntimeError, match="has not been initialized"):
        dist.get_rank(dist.GroupMember.NON_GROUP_MEMBER)
    assert issubclass(dist.DistBackendError, dist.DistError)
    assert issubclass(dist.DistError, RuntimeError)
