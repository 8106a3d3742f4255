"""Rank script (3 ranks): dist.new_group and the rank translations, with torch's
semantics: every rank calls new_group; ranks are sorted; a non-member gets
GroupMember.NON_GROUP_MEMBER, -1 from get_rank/get_world_size, and its collectives on
the group warn and do nothing; `src` is a global rank. Values are checked against
NumPy sums of each rank's known input. Prints `OK <rank>`."""
import datetime
import warnings

import numpy as np

import tapegrad as tg
import tapegrad.distributed as dist

assert dist.group.WORLD is None and dist.GroupMember.WORLD is None
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=60))
r, W = dist.get_rank(), dist.get_world_size()
assert W == 3
world = dist.group.WORLD
assert world is dist.GroupMember.WORLD and world.size() == 3 and world.rank() == r
assert dist.get_rank(world) == r and dist.get_process_group_ranks(world) == [0, 1, 2]

# all ranks: a group of its own, the same values as the world
everyone = dist.new_group()
t = tg.tensor([float(r + 1)])
dist.all_reduce(t, group=everyone)
assert t.item() == 6.0
assert dist.get_world_size(everyone) == 3 and dist.get_rank(everyone) == r

# a subset, given unsorted: global ranks [0, 2] -> group ranks 0, 1
sub = dist.new_group([2, 0], timeout=datetime.timedelta(seconds=30))
if r in (0, 2):
    assert dist.get_rank(sub) == r // 2 and dist.get_world_size(sub) == 2
    assert dist.get_process_group_ranks(sub) == [0, 2]
    assert dist.get_group_rank(sub, 2) == 1 and dist.get_global_rank(sub, 1) == 2
    t = tg.tensor([1.0, 2.0]) * (r + 1)
    dist.all_reduce(t, group=sub)                      # ranks 0 and 2: x1 + x3
    np.testing.assert_array_equal(t.numpy(), [4.0, 8.0])
    t = tg.tensor([float(r)] * 2)
    dist.broadcast(t, src=2, group=sub)                # src is the GLOBAL rank
    np.testing.assert_array_equal(t.numpy(), [2.0, 2.0])
    t = tg.tensor([float(r)])
    dist.broadcast(t, group=sub, group_src=0)
    assert t.item() == 0.0
    outs = [tg.zeros(1) for _ in range(2)]
    dist.all_gather(outs, tg.tensor([float(r)]), group=sub)
    assert [o.item() for o in outs] == [0.0, 2.0]
    objs = [None, None]
    dist.all_gather_object(objs, f"rank{r}", group=sub)
    assert objs == ["rank0", "rank2"]
    dist.barrier(group=sub)
    # DDP over the subgroup averages over its two ranks only: grad of sum(w . x_r)
    # is x_r = [r + 1, 1], averaged over ranks 0 and 2
    lin = tg.nn.Linear(2, 1, bias=False)
    ddp = tg.nn.parallel.DistributedDataParallel(lin, process_group=sub)
    ddp(tg.tensor([[r + 1.0, 1.0]])).sum().backward()
    np.testing.assert_array_equal(lin.weight.grad.numpy(), [[2.0, 1.0]])
    try:
        dist.broadcast(tg.zeros(1), src=1, group=sub)
    except ValueError as e:
        assert "src=1 is not a rank of this group (its global ranks are [0, 2])" in str(e)
    else:
        raise AssertionError("broadcast from a non-member src did not raise")
    try:
        dist.get_group_rank(sub, 1)
    except ValueError as e:
        assert "Global rank 1 is not part of group" in str(e), e
    else:
        raise AssertionError("get_group_rank of a non-member did not raise")
else:
    assert sub == dist.GroupMember.NON_GROUP_MEMBER
    assert dist.get_rank(sub) == -1 and dist.get_world_size(sub) == -1
    t = tg.tensor([5.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert dist.all_reduce(t, group=sub) is None
    assert t.item() == 5.0
    try:
        tg.nn.parallel.DistributedDataParallel(tg.nn.Linear(2, 1), process_group=sub)
    except ValueError as e:
        assert "global rank 1 is not a member of the given group" in str(e), e
    else:
        raise AssertionError("DDP on a group this rank is not in")
    assert any("Running all_reduce on global rank 1 which does not belong to the given "
               "group." in str(w.message) for w in caught), [str(w.message) for w in caught]

# the world still works after the subgroup's traffic (separate communicators)
t = tg.tensor([float(r)])
dist.all_reduce(t)
assert t.item() == 3.0

# bad input: the same errors on every rank (each checks before communicating)
for call, msg in [(lambda: dist.new_group([0, 0]), "must not contain duplicate entries"),
                  (lambda: dist.new_group([0, 3]), "Rank 3 is out of range. Valid ranks are "
                                                   "0 to 2 (world_size=3)"),
                  (lambda: dist.new_group([0], use_local_synchronization=True),
                   "MPI backend doesn't support use_local_synchronization=True"),
                  (lambda: dist.new_group(backend="nccl"), "is not available"),
                  (lambda: dist.all_reduce(t, group="WORLD"), "group must be None or a group"),
                  (lambda: dist.new_group(timeout=5), "Expected timeout argument to be of type "
                                                    "datetime.timedelta, got 5"),
                  (lambda: dist.init_process_group(), "twice")]:
    try:
        call()
    except (ValueError, TypeError) as e:
        assert msg in str(e), (msg, str(e))
    else:
        raise AssertionError(f"no error for {msg}")

dist.destroy_process_group(sub)
if r != 1:
    try:
        dist.all_reduce(tg.zeros(1), group=sub)
    except ValueError as e:
        assert "was destroyed" in str(e)
    else:
        raise AssertionError("a destroyed group still worked")
dist.destroy_process_group()
assert not dist.is_initialized() and dist.group.WORLD is None
print(f"OK {r}", flush=True)
