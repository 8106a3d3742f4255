"""tg.multiprocessing and shared tensors: share_memory_ / is_shared / Module.share_memory,
shared tensors through Process arguments ('spawn', 'fork') and Queues, Hogwild training
in the style of pytorch/examples' mnist_hogwild, and spawn()'s error reporting, compared
with torch.multiprocessing where torch runs the same program.

Child processes run tests/_mp_children.py. tapegrad's children use the start method under
test; torch's (the oracle) are forked, so they do not import torch again.
"""
import copy
import pickle
import queue
import time
from multiprocessing.reduction import ForkingPickler

import numpy as np
import pytest
import torch

import tapegrad as tg
import tapegrad.multiprocessing as tmp
from tapegrad.utils.data import TensorDataset as TgTensorDataset

import _mp_children as C

TIMEOUT = 120  # a hung child fails the test instead of blocking it


def _run(ctx, target, args):
    p = ctx.Process(target=target, args=args)
    p.start()
    return p


def _join(*procs):
    for p in procs:
        p.join(TIMEOUT)
        assert p.exitcode == 0, f"child exited with {p.exitcode}"


# ---- share_memory_, is_shared, Module.share_memory ----------------------------------
@pytest.mark.parametrize("make", [
    lambda t: t.arange(6, dtype=t.float32).reshape(2, 3),
    lambda t: t.arange(5, dtype=t.int64),
    lambda t: t.tensor([True, False]),
    lambda t: t.tensor(2.5, dtype=t.float64),
    lambda t: t.zeros(0),
    lambda t: t.arange(12, dtype=t.float32).reshape(3, 4).t(),  # not contiguous
])
def test_share_memory_keeps_values_and_reports_as_torch(make):
    for t in (tg, torch):
        x = make(t)
        before = x.detach().clone()
        assert not x.is_shared()
        assert x.share_memory_() is x
        assert x.is_shared()
        assert (x.dtype, tuple(x.shape)) == (before.dtype, tuple(before.shape))
        assert t.equal(x, before)
        # views and .data share the memory; clone does not (torch's answers)
        assert x.data.is_shared() and x.detach().is_shared()
        if x.ndim:
            assert x[:1].is_shared()
        assert not x.clone().is_shared()


def test_share_memory_twice_and_autograd_flags():
    x = tg.randn(3, requires_grad=True)
    x.share_memory_()
    arr = x._data
    assert x.share_memory_() is x and x._data is arr  # already shared: left as it is
    assert x.requires_grad and x.is_leaf
    (x * x).sum().backward()  # still a leaf that gets its gradient
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_module_share_memory_as_torch():
    results = []
    for t in (tg, torch):
        m = t.nn.Sequential(t.nn.Linear(3, 2), t.nn.BatchNorm1d(2))
        m[0](t.ones(1, 3)).sum().backward()  # Linear's gradients exist, BatchNorm's not
        assert m.share_memory() is m
        results.append((
            [p.is_shared() for p in m.parameters()],
            [b.is_shared() for b in m.buffers()],
            [p.grad is not None and p.grad.is_shared() for p in m.parameters()],
            [type(p).__name__ for p in m.parameters()]))
    assert results[0] == results[1]
    assert all(results[0][0]) and all(results[0][1]) and results[0][2] == [True, True,
                                                                             False, False]


def test_in_place_updates_stay_in_shared_memory():
    # the optimizer paths Hogwild children take must write into the shared array, not
    # rebind the tensor to a new one
    m = C.Net().share_memory()
    arrays = [p._data for p in m.parameters()]
    x, y = tg.randn(4, 8), tg.tensor([0, 1, 2, 0])
    for opt in (tg.optim.SGD(m.parameters(), lr=0.1),
                tg.optim.SGD(m.parameters(), lr=0.1, momentum=0.5, weight_decay=1e-2),
                tg.optim.Adam(m.parameters(), lr=0.1)):
        for _ in range(2):
            opt.zero_grad()
            tg.nn.functional.cross_entropy(m(x), y).backward()
            opt.step()
    for p in m.parameters():
        p.data.add_(1.0)
        with tg.no_grad():
            p -= 0.5
            p.mul_(1.0)
    assert all(p._data is a and p.is_shared() for p, a in zip(m.parameters(), arrays))


# ---- pickling --------------------------------------------------------------------------
def test_non_shared_tensors_pickle_by_value_as_before():
    for x in (tg.arange(4.0), tg.nn.Parameter(tg.ones(2, 2))):
        # multiprocessing's pickler gives exactly the bytes of the ordinary pickle
        blob = bytes(ForkingPickler.dumps(x))
        assert blob == pickle.dumps(x, protocol=pickle.DEFAULT_PROTOCOL)
        y = pickle.loads(blob)
        assert type(y) is type(x) and tg.equal(y, x) and not y.is_shared()
        y.data.add_(1)
        assert not tg.equal(y, x)  # a copy


def test_shared_tensor_through_plain_pickle_and_deepcopy_is_a_copy_as_torch():
    for t in (tg, torch):
        x = t.ones(3).share_memory_()
        for y in (pickle.loads(pickle.dumps(x)), copy.deepcopy(x)):
            assert not y.is_shared()
            y.add_(1)
        assert t.equal(x, t.ones(3))


def test_non_leaf_shared_tensor_is_refused_as_torch():
    for t in (tg, torch):
        w = t.ones(2, requires_grad=True)
        y = (w * 2).share_memory_()
        with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf"):
            ForkingPickler.dumps(y)


# ---- Queues ------------------------------------------------------------------------------
def _queue_roundtrip(t, ctx, x, amount=10.0):
    inbox, outbox = ctx.Queue(), ctx.Queue()
    p = _run(ctx, C.add_from_queue, (0, t.__name__, inbox, outbox, amount))
    inbox.put(x)
    deadline = time.monotonic() + TIMEOUT
    while True:  # a child that died fails at once, not after the timeout
        try:
            got = outbox.get(timeout=0.2)
            break
        except queue.Empty:
            assert p.is_alive() and time.monotonic() < deadline, "the child failed"
    _join(p)
    return got


@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_queue_passes_shared_tensor_as_torch(method):
    tctx = torch.multiprocessing.get_context("fork")  # the oracle, forked
    for t, ctx in ((tg, tmp.get_context(method)), (torch, tctx)):
        x = t.tensor([1.0, 2.0, 3.0]).share_memory_()
        got = _queue_roundtrip(t, ctx, x)
        assert got == ("Tensor", True, False, [11.0, 12.0, 13.0])
        assert x.tolist() == [11.0, 12.0, 13.0]  # the receiver's change is the sender's
        p = t.nn.Parameter(t.zeros(2)).share_memory_()
        got = _queue_roundtrip(t, ctx, p, amount=1.0)
        assert got == ("Parameter", True, True, [1.0, 1.0])
        assert p.tolist() == [1.0, 1.0]


def test_queue_passes_non_shared_tensor_by_value():
    # torch would move it into shared memory; tapegrad sends a copy (documented)
    x = tg.tensor([1.0, 2.0])
    got = _queue_roundtrip(tg, tmp.get_context("fork"), x)
    assert got == ("Tensor", False, False, [11.0, 12.0])
    assert x.tolist() == [1.0, 2.0]


# ---- Hogwild -------------------------------------------------------------------------------
def _data(n=48, d=8, classes=3, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((n, d)).astype(np.float32),
            rng.integers(0, classes, n).astype(np.int64))


def _weights(m):
    return [p.detach().numpy().copy() for p in m.parameters()]


def test_hogwild_spawn_two_children_at_once():
    """Two 'spawn' children train concurrently, each on its own parameters (heads[rank]):
    the order is then irrelevant and the parent's model must equal the same training run
    in this process, one rank after the other."""
    x, y = _data()
    dataset = TgTensorDataset(tg.tensor(x), tg.tensor(y))
    hp = dict(lr=0.1, momentum=0.5, batch_size=8, shuffle=True, seed=1, epochs=1,
              head=True)
    model = C.Heads()
    reference = copy.deepcopy(model)
    initial = _weights(model)
    model.share_memory()
    ctx = tmp.get_context("spawn")
    _join(*[_run(ctx, C.train, (rank, "tapegrad", model, dataset, hp)) for rank in (0, 1)])
    for rank in (0, 1):
        C.train(rank, "tapegrad", reference, dataset, hp)
    got, want = _weights(model), _weights(reference)
    for g, w, i in zip(got, want, initial):
        assert not np.array_equal(g, i)  # every head was trained by its child
        np.testing.assert_array_equal(g, w)


def _hogwild_fork_one_at_a_time(t, share=True):
    """mnist_hogwild under 'fork': each child trains the whole model on its shard; the
    children run one after the other (join in between), so the result is determined."""
    x, y = _data()
    model = C.Net() if t is tg else C._classes(torch)[0]()
    with t.no_grad():  # torch's model starts from tapegrad's initial weights
        for p, w in zip(model.parameters(), _weights(_hogwild_initial_model())):
            p.copy_(t.tensor(w))
    if share:
        model.share_memory()
    hp = dict(lr=0.05, momentum=0.5, batch_size=8, shuffle=False, seed=1, epochs=2)
    ctx = (tmp if t is tg else torch.multiprocessing).get_context("fork")
    for rank in (0, 1):
        shard = t.utils.data.TensorDataset(t.tensor(x[rank::2]), t.tensor(y[rank::2]))
        _join(_run(ctx, C.train, (rank, t.__name__, model, shard, hp)))
    return model, hp, x, y


def _hogwild_initial_model():
    tg.manual_seed(123)
    return C.Net()


def test_hogwild_fork_children_update_the_parents_model_as_torch():
    model, hp, x, y = _hogwild_fork_one_at_a_time(tg)
    reference = _hogwild_initial_model()
    for rank in (0, 1):
        shard = TgTensorDataset(tg.tensor(x[rank::2]), tg.tensor(y[rank::2]))
        C.train(rank, "tapegrad", reference, shard, hp)
    got = _weights(model)
    for g, w, i in zip(got, _weights(reference), _weights(_hogwild_initial_model())):
        assert not np.array_equal(g, i)
        np.testing.assert_array_equal(g, w)
    oracle, *_ = _hogwild_fork_one_at_a_time(torch)
    for g, w in zip(got, _weights(oracle)):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_hogwild_fork_without_share_memory_leaves_the_parent_unchanged():
    # the control: without share_memory() a forked child's updates are its own (copy on
    # write), in tapegrad as in torch
    for t in (tg, torch):
        model, *_ = _hogwild_fork_one_at_a_time(t, share=False)
        for g, i in zip(_weights(model), _weights(_hogwild_initial_model())):
            np.testing.assert_array_equal(g, i)


# ---- spawn / start_processes ------------------------------------------------------------
def test_spawn_runs_fn_with_rank_and_join_false_returns_context():
    x = tg.zeros(2).share_memory_()
    ctx = tmp.spawn(C.write_rank, args=("tapegrad", x), nprocs=2, join=False)
    assert isinstance(ctx, tmp.ProcessContext) and len(ctx.pids()) == 2
    while not ctx.join(timeout=TIMEOUT):
        pass
    assert ctx.join() is True
    assert x.tolist() == [1.0, 2.0]
    y = torch.zeros(2).share_memory_()  # torch's answer to the same program
    torch.multiprocessing.start_processes(C.write_rank, args=("torch", y), nprocs=2,
                                          start_method="fork")
    assert y.tolist() == x.tolist()


def _error_of(mp, fn, args, nprocs, start_method):
    with pytest.raises((mp.ProcessRaisedException, mp.ProcessExitedException)) as info:
        if start_method == "spawn":
            mp.spawn(fn, args=args, nprocs=nprocs)
        else:
            mp.start_processes(fn, args=args, nprocs=nprocs, start_method=start_method)
    e = info.value
    return type(e).__name__, e.error_index, e.msg, getattr(e, "exit_code", None)


def test_spawn_reports_the_childs_exception_as_torch():
    name, index, msg, _ = _error_of(tmp, C.fail, ("boom",), 2, "spawn")
    tname, tindex, tmsg, _ = _error_of(torch.multiprocessing, C.fail, ("boom",), 2,
                                       "fork")
    assert (name, index) == (tname, tindex) == ("ProcessRaisedException", 1)
    assert msg.startswith("\n\n-- Process 1 terminated with the following error:\n"
                          "Traceback (most recent call last):\n")
    assert msg.rstrip().endswith("ValueError: boom from rank 1")
    # the same text as torch's but for the frames of the wrapper that ran fn
    assert msg.splitlines()[:3] == tmsg.splitlines()[:3]
    assert msg.splitlines()[-3:] == tmsg.splitlines()[-3:]


def test_start_processes_reports_an_exit_code_as_torch():
    got = _error_of(tmp, C.exit_with, (3,), 1, "fork")
    want = _error_of(torch.multiprocessing, C.exit_with, (3,), 1, "fork")
    assert got == want == ("ProcessExitedException", 0,
                           "process 0 terminated with exit code 3", 3)


def test_module_surface_as_torch():
    ours = {n for n in dir(tmp) if not n.startswith("_")}
    theirs = {n for n in dir(torch.multiprocessing) if not n.startswith("_")}
    assert theirs - ours == {"torch"}
    assert tmp.get_sharing_strategy() == torch.multiprocessing.get_sharing_strategy()
    assert tmp.get_all_sharing_strategies() == torch.multiprocessing.get_all_sharing_strategies()
    with pytest.raises(AssertionError, match="invalid sharing strategy"):
        tmp.set_sharing_strategy("nope")
    assert tmp.Process is torch.multiprocessing.Process  # Python's own, re-exported
