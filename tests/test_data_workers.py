"""DataLoader(num_workers > 0): real worker processes.

Checked: batches identical and in the same order as num_workers=0 for the same generator
(also with persistent workers over epochs, any prefetch_factor), torch's own multi-worker
order for sequential and IterableDataset sharding, worker_init_fn / get_worker_info /
seeding, errors raised in a worker re-raised with its traceback, dead and slow workers,
workers shut down when an iterator is dropped half way and at interpreter exit, and the
makemore / minGPT data-loading code shapes. Small datasets, 2 workers, to stay fast.
"""
import gc
import os
import subprocess
import sys
import textwrap
import time
import warnings

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import tapegrad as tg
from tapegrad.utils import data as tgd

WAIT = 30  # seconds: a DataLoader timeout that only a hang would reach


class Items(tgd.Dataset):
    """Per-sample dataset (no batch fast path): a float vector and an int label."""

    def __init__(self, n, lib=tg):
        self.n, self.torch = n, lib is torch  # no module attribute: spawn pickles this

    @property
    def lib(self):
        return torch if self.torch else tg

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.lib.tensor([float(i), i / 2.0], dtype=self.lib.float64), i % 3


def _flat(batches):
    out = []
    for b in batches:
        out.append([np.asarray(f.numpy() if hasattr(f, "numpy") else f) for f in b])
    return out


def _same(a, b):
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert len(x) == len(y)
        for u, v in zip(x, y):
            assert u.dtype == v.dtype
            np.testing.assert_array_equal(u, v)


def _xy(n=23):
    return tg.arange(n * 2, dtype=tg.float32).reshape(n, 2), tg.arange(n)


@pytest.mark.parametrize("make", ["tensor", "items"])
@pytest.mark.parametrize("kw", [dict(batch_size=4), dict(batch_size=5, drop_last=True),
                                dict(batch_size=3, prefetch_factor=1),
                                dict(batch_size=2, prefetch_factor=4)])
def test_shuffled_batches_equal_single_process(make, kw):
    ds = tgd.TensorDataset(*_xy()) if make == "tensor" else Items(23)

    def run(workers):
        extra = {"prefetch_factor": kw["prefetch_factor"]} if workers and "prefetch_factor" in kw \
            else {}
        base = {k: v for k, v in kw.items() if k != "prefetch_factor"}
        loader = tgd.DataLoader(ds, shuffle=True, generator=tg.Generator().manual_seed(7),
                                num_workers=workers, timeout=WAIT, **base, **extra) if workers \
            else tgd.DataLoader(ds, shuffle=True, generator=tg.Generator().manual_seed(7), **base)
        return [_flat(loader), _flat(loader)]  # two epochs

    single, multi = run(0), run(2)
    for e in range(2):
        _same(multi[e], single[e])
    assert not np.array_equal(single[0][0][0], single[1][0][0])  # epochs differ


def test_persistent_workers_keep_processes_and_the_stream():
    ds = Items(17)
    g0, g2 = tg.Generator().manual_seed(3), tg.Generator().manual_seed(3)
    single = tgd.DataLoader(ds, batch_size=4, shuffle=True, generator=g0)
    multi = tgd.DataLoader(ds, batch_size=4, shuffle=True, generator=g2, num_workers=2,
                           persistent_workers=True, timeout=WAIT)
    it1 = iter(multi)
    pids = [w.pid for w in it1._workers]
    _same(_flat(it1), _flat(single))
    for epoch in range(2):
        _same(_flat(multi), _flat(single))
    assert iter(multi) is it1 and [w.pid for w in it1._workers] == pids
    assert all(w.is_alive() for w in it1._workers)
    # an epoch abandoned half way: the next epoch still starts cleanly. (Its stream may
    # differ from num_workers=0's: prefetching read the sampler ahead, as torch does.)
    it = iter(multi)
    next(it)
    labels = sorted(i for b in multi for i in b[1].tolist())
    assert len(labels) == 17 and [b[1].shape[0] for b in multi] == [4, 4, 4, 4, 1]
    workers = it1._workers
    del multi, it, it1
    gc.collect()
    for w in workers:
        w.join(WAIT)
        assert not w.is_alive()


def test_sequential_order_matches_torch_workers():
    ours = tgd.DataLoader(Items(11), batch_size=3, num_workers=2, timeout=WAIT)
    theirs = tud.DataLoader(Items(11, torch), batch_size=3, num_workers=2, timeout=WAIT)
    _same(_flat(ours), _flat(theirs))
    assert len(ours) == len(theirs)


def test_batch_size_none_and_custom_collate_and_batch_sampler():
    ds = Items(6)
    a = list(tgd.DataLoader(ds, batch_size=None, num_workers=2, timeout=WAIT))
    b = list(tgd.DataLoader(ds, batch_size=None))
    assert [s[1] for s in a] == [s[1] for s in b] == [0, 1, 2, 0, 1, 2]
    # a lambda collate_fn works: fork start, nothing to pickle
    loader = tgd.DataLoader(ds, batch_size=4, num_workers=2, collate_fn=lambda b: [s[1] for s in b])
    assert list(loader) == [[0, 1, 2, 0], [1, 2]]
    loader = tgd.DataLoader(ds, batch_sampler=[[5], [0, 1], [4, 4]], num_workers=2)
    assert [b[1].tolist() for b in loader] == [[2], [0, 1], [1, 1]]


class WhoAmI(tgd.Dataset):
    """Each sample reports the worker that made it and a random number drawn there."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        info = tgd.get_worker_info()
        return {"i": i, "id": info.id, "n": info.num_workers, "seed": info.seed,
                "tg": float(tg.rand(()).item()),
                "np": float(np.random.rand()), "init": os.environ.get("TG_WORKER_INIT", "")}


def _init(worker_id):
    os.environ["TG_WORKER_INIT"] = f"init{worker_id}"


def test_worker_info_seeds_and_worker_init_fn():
    assert tgd.get_worker_info() is None  # main process
    loader = tgd.DataLoader(WhoAmI(), batch_size=2, num_workers=2, worker_init_fn=_init,
                            generator=tg.Generator().manual_seed(5), timeout=WAIT)
    batches = list(loader)
    ids = [b["id"].tolist() for b in batches]
    assert ids == [[0, 0], [1, 1], [0, 0], [1, 1]]  # task i goes to worker i % 2, as torch
    assert all(b["n"].tolist() == [2, 2] for b in batches)
    assert [b["init"] for b in batches] == [["init0"] * 2, ["init1"] * 2] * 2
    seeds = {w: s for b in batches for w, s in zip(b["id"].tolist(), b["seed"].tolist())}
    assert seeds[1] == seeds[0] + 1  # base_seed + worker_id
    # the same generator seed gives the same worker randomness; workers differ
    again = list(tgd.DataLoader(WhoAmI(), batch_size=2, num_workers=2, worker_init_fn=_init,
                                generator=tg.Generator().manual_seed(5), timeout=WAIT))
    for key in ("tg", "np", "seed"):
        assert [b[key].tolist() for b in batches] == [b[key].tolist() for b in again]
    assert batches[0]["tg"].tolist() != batches[1]["tg"].tolist()
    assert batches[0]["np"].tolist() != batches[1]["np"].tolist()
    other = list(tgd.DataLoader(WhoAmI(), batch_size=2, num_workers=2,
                                generator=tg.Generator().manual_seed(6), timeout=WAIT))
    assert other[0]["seed"].tolist() != batches[0]["seed"].tolist()
    with pytest.raises(RuntimeError, match="Cannot assign"):
        tgd.WorkerInfo(id=0).id = 1


def _make_sharded(base, get_info):
    class Sharded(base):
        """torch's documented IterableDataset sharding: each worker takes a slice."""

        def __init__(self, start, end):
            self.start, self.end = start, end

        def __iter__(self):
            info = get_info()
            if info is None:
                lo, hi = self.start, self.end
            else:
                per = int(np.ceil((self.end - self.start) / info.num_workers))
                lo = self.start + info.id * per
                hi = min(lo + per, self.end)
            return iter(range(lo, hi))
    return Sharded


OurSharded = _make_sharded(tgd.IterableDataset, tgd.get_worker_info)
TheirSharded = _make_sharded(tud.IterableDataset, tud.get_worker_info)


@pytest.mark.parametrize("kw", [dict(batch_size=2), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=4)])
def test_iterable_dataset_sharding_order_matches_torch(kw):
    ours = [b.tolist() if hasattr(b, "tolist") else b
            for b in tgd.DataLoader(OurSharded(3, 14), num_workers=2, timeout=WAIT, **kw)]
    theirs = [b.tolist() if hasattr(b, "tolist") else b
              for b in tud.DataLoader(TheirSharded(3, 14), num_workers=2, timeout=WAIT, **kw)]
    assert ours == theirs
    single = [b.tolist() if hasattr(b, "tolist") else b
              for b in tgd.DataLoader(OurSharded(3, 14), **kw)]
    assert sorted(np.ravel(sum(([x] if isinstance(x, int) else x for x in single), [])).tolist()) \
        == sorted(np.ravel(sum(([x] if isinstance(x, int) else x for x in ours), [])).tolist()) \
        or kw.get("drop_last")


def test_persistent_workers_restart_an_iterable_dataset_each_epoch_like_torch():
    ours = tgd.DataLoader(OurSharded(0, 9), batch_size=2, num_workers=2, persistent_workers=True,
                          timeout=WAIT)
    theirs = tud.DataLoader(TheirSharded(0, 9), batch_size=2, num_workers=2,
                            persistent_workers=True, timeout=WAIT)
    for epoch in range(3):
        assert [b.tolist() for b in ours] == [b.tolist() for b in theirs]


def test_iterable_dataset_without_sharding_repeats_per_worker_like_torch():
    class Plain(tgd.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    class TPlain(tud.IterableDataset):
        def __iter__(self):
            return iter(range(3))

    ours = [b.tolist() for b in tgd.DataLoader(Plain(), batch_size=2, num_workers=2)]
    theirs = [b.tolist() for b in tud.DataLoader(TPlain(), batch_size=2, num_workers=2)]
    assert ours == theirs == [[0, 1], [0, 1], [2], [2]]


class Boom(tgd.Dataset):
    def __init__(self, exc):
        self.exc = exc

    def __len__(self):
        return 8

    def __getitem__(self, i):
        if i == 5:
            raise_from_dataset(self.exc)
        return i


def raise_from_dataset(exc):
    raise exc


class TwoArgError(Exception):
    def __init__(self, a, b):
        super().__init__(a, b)


@pytest.mark.parametrize("exc,expect", [(ValueError("bad sample 5"), ValueError),
                                        (KeyError("missing"), KeyError),
                                        (TwoArgError("x", "y"), RuntimeError)])
def test_worker_exception_is_reraised_with_its_traceback(exc, expect):
    loader = tgd.DataLoader(Boom(exc), batch_size=2, num_workers=2, timeout=WAIT)
    it = iter(loader)
    assert next(it).tolist() == [0, 1] and next(it).tolist() == [2, 3]
    with pytest.raises(expect) as info:
        next(it)
    msg, value = str(info.value), info.value
    del info  # its traceback holds the iterator's frame
    name = type(exc).__name__
    assert f"Caught {name} in DataLoader worker process 0" in msg  # batch 2 -> worker 0
    assert "Original Traceback" in msg and "raise_from_dataset" in msg and "__getitem__" in msg
    assert str(exc.args[0]) in msg
    if expect is KeyError:
        assert "\\n" not in repr(value)  # readable, not one escaped line
    workers = it._workers
    del it, value
    gc.collect()
    for w in workers:
        w.join(WAIT)
        assert not w.is_alive()


def _bad_init(worker_id):
    if worker_id == 1:
        raise OSError("no data on this node")


def test_worker_init_fn_error_is_reraised():
    loader = tgd.DataLoader(Items(8), batch_size=2, num_workers=2, worker_init_fn=_bad_init,
                            timeout=WAIT)
    it = iter(loader)
    next(it)
    with pytest.raises(OSError, match="(?s)worker process 1.*no data on this node"):
        next(it)


def test_non_leaf_tensor_from_a_worker_is_an_error_and_leaves_keep_dtype_and_grad_flag():
    w = tg.ones(2, requires_grad=True)

    class Grad(tgd.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return w * i

    with pytest.raises(RuntimeError, match="(?s)worker process.*detach"):
        list(tgd.DataLoader(Grad(), batch_size=None, num_workers=1, timeout=WAIT))

    class Leaves(tgd.Dataset):
        def __len__(self):
            return 2

        def __getitem__(self, i):
            return (tg.ones(2, dtype=tg.float64, requires_grad=True), tg.tensor([i], dtype=tg.int16),
                    np.arange(3, dtype=np.uint8) + i)

    (a, b, c), _ = list(tgd.DataLoader(Leaves(), batch_size=None, num_workers=1, timeout=WAIT))
    assert a.requires_grad and a.is_leaf and a.dtype == np.float64
    assert b.dtype == np.int16 and isinstance(c, tg.Tensor) and c.dtype == np.uint8


class Killer(tgd.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i == 2:
            os._exit(3)
        return i


def test_dead_worker_is_reported():
    it = iter(tgd.DataLoader(Killer(), batch_size=1, num_workers=2))
    # (batches the dying worker made before may be lost with it: no check on them)
    with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+ \(exit code 3\)\) "
                                           r"exited unexpectedly"):
        list(it)


class Slow(tgd.Dataset):
    def __len__(self):
        return 4

    def __getitem__(self, i):
        if i >= 2:
            time.sleep(60)
        return i


def test_timeout_raises_and_stuck_workers_are_ended():
    # (generous: the first two batches must arrive within it on a loaded machine)
    it = iter(tgd.DataLoader(Slow(), batch_size=1, num_workers=2, timeout=1.5))
    assert next(it).tolist() == [0] and next(it).tolist() == [1]
    with pytest.raises(RuntimeError, match="DataLoader timed out after 1.5 seconds"):
        next(it)
    workers = it._workers
    it._shutdown_workers()  # what dropping the iterator does; workers in sleep get ended
    assert not any(w.is_alive() for w in workers)


def test_in_order_false_yields_every_batch():
    loader = tgd.DataLoader(Items(13), batch_size=2, num_workers=2, in_order=False, timeout=WAIT)
    got = sorted(i for b in loader for i in b[0].numpy()[:, 0].astype(int).tolist())
    assert got == list(range(13))


def test_workers_end_after_an_epoch_and_when_an_iterator_is_dropped():
    loader = tgd.DataLoader(Items(20), batch_size=2, num_workers=2, timeout=WAIT)
    it = iter(loader)
    list(it)
    assert not any(w.is_alive() for w in it._workers)  # joined at the end of the epoch
    it = iter(loader)
    next(it)
    workers = it._workers
    assert all(w.is_alive() for w in workers)
    del it
    gc.collect()
    for w in workers:
        w.join(WAIT)
        assert not w.is_alive()
    # an iterator that dies in a reference cycle (the queues' finalizers run first):
    # the workers still see the shutdown and exit by themselves, not by terminate()
    it = iter(loader)
    next(it)
    it.cycle = it
    workers = it._workers
    del it
    gc.collect()
    for w in workers:
        w.join(WAIT)
        assert w.exitcode == 0


def test_spawn_context_works_with_picklable_pieces():
    loader = tgd.DataLoader(Items(5), batch_size=2, num_workers=1, multiprocessing_context="spawn",
                            timeout=120)
    _same(_flat(loader), _flat(tgd.DataLoader(Items(5), batch_size=2)))
    # under spawn the pieces must pickle: a lambda fails at iter(), as in torch
    bad = tgd.DataLoader(Items(5), batch_size=2, num_workers=1, multiprocessing_context="spawn",
                         collate_fn=lambda b: b)
    with pytest.raises(Exception, match="pickle"):
        iter(bad)


# ---- the public programs' data loading ------------------------------------------------
class CharDataset(tgd.Dataset):
    """makemore-style: words -> (x, y) index tensors padded to a fixed length."""

    def __init__(self, words, chars, max_word_length):
        self.words, self.max_word_length = words, max_word_length
        self.stoi = {ch: i + 1 for i, ch in enumerate(chars)}

    def __len__(self):
        return len(self.words)

    def get_output_length(self):
        return self.max_word_length + 1

    def encode(self, word):
        return tg.tensor([self.stoi[w] for w in word], dtype=tg.long)

    def __getitem__(self, idx):
        word = self.words[idx]
        ix = self.encode(word)
        x = tg.zeros(self.max_word_length + 1, dtype=tg.long)
        y = tg.zeros(self.max_word_length + 1, dtype=tg.long)
        x[1:1 + len(ix)] = ix
        y[:len(ix)] = ix
        y[len(ix) + 1:] = -1
        return x, y


class InfiniteDataLoader:
    """makemore's loader shape: a sampler with replacement and num_samples=1e10."""

    def __init__(self, dataset, **kwargs):
        train_sampler = tgd.RandomSampler(dataset, replacement=True, num_samples=int(1e10))
        self.train_loader = tgd.DataLoader(dataset, sampler=train_sampler, **kwargs)
        self.data_iter = iter(self.train_loader)

    def next(self):
        try:
            batch = next(self.data_iter)
        except StopIteration:
            self.data_iter = iter(self.train_loader)
            batch = next(self.data_iter)
        return batch


def test_makemore_infinite_data_loader_with_workers():
    words = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia"]
    ds = CharDataset(words, sorted(set("".join(words))), max(map(len, words)))
    tg.manual_seed(42)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pin_memory on CPU; 4 workers on a small machine
        batch_loader = InfiniteDataLoader(ds, batch_size=4, pin_memory=True, num_workers=4)
    emb = tg.nn.Embedding(len(ds.stoi) + 1, 8)
    head = tg.nn.Linear(8, len(ds.stoi) + 1)
    opt = tg.optim.AdamW(list(emb.parameters()) + list(head.parameters()), lr=1e-2)
    for step in range(6):
        batch = batch_loader.next()
        X, Y = [t.to("cpu") for t in batch]
        assert X.shape == (4, ds.get_output_length()) and X.dtype == np.int64
        logits = head(emb(X))
        loss = tg.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), Y.view(-1),
                                              ignore_index=-1)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    assert np.isfinite(loss.item())
    # the same global seed gives the same batches with 0 workers
    tg.manual_seed(42)
    single = InfiniteDataLoader(ds, batch_size=4)
    expect = _flat([single.next() for _ in range(5)])
    tg.manual_seed(42)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        multi = InfiniteDataLoader(ds, batch_size=4, num_workers=4)
    _same(_flat([multi.next() for _ in range(5)]), expect)


class SortDataset(tgd.Dataset):
    """minGPT demo-style: sort a short list of digits (x: prompt, y: shifted target)."""

    def __init__(self, length=6, num_digits=3):
        self.length, self.num_digits = length, num_digits

    def __len__(self):
        return 1000

    def __getitem__(self, idx):
        inp = tg.randint(self.num_digits, size=(self.length,), dtype=tg.long)
        sol = tg.sort(inp)[0]
        cat = tg.cat((inp, sol), dim=0)
        x = cat[:-1].clone()
        y = cat[1:].clone()
        y[:self.length - 1] = -1
        return x, y


def test_mingpt_trainer_loop_with_workers():
    train_dataset = SortDataset()
    model = tg.nn.Sequential(tg.nn.Embedding(3, 16), tg.nn.Linear(16, 3))
    optimizer = tg.optim.AdamW(model.parameters(), lr=5e-3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        train_loader = tgd.DataLoader(
            train_dataset,
            sampler=tgd.RandomSampler(train_dataset, replacement=True, num_samples=int(1e10)),
            shuffle=False, pin_memory=True, batch_size=16, num_workers=2)
    iter_num, max_iters = 0, 8
    data_iter = iter(train_loader)
    while True:
        try:
            batch = next(data_iter)
        except StopIteration:
            data_iter = iter(train_loader)
            batch = next(data_iter)
        batch = [t.to("cpu") for t in batch]
        x, y = batch
        logits = model(x)
        loss = tg.nn.functional.cross_entropy(logits.view(-1, 3), y.view(-1), ignore_index=-1)
        model.zero_grad(set_to_none=True)
        loss.backward()
        tg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        iter_num += 1
        if iter_num >= max_iters:
            break
    assert x.shape == (16, 11) and (y[:, :5].numpy() == -1).all()
    # the targets are sorted inputs: the workers' random draws made real samples
    srt = y[:, 5:].numpy()
    assert (np.diff(srt, axis=1) >= 0).all()
    workers = data_iter._workers
    del data_iter
    gc.collect()
    for w in workers:
        w.join(WAIT)
        assert not w.is_alive()


def test_interpreter_exit_with_a_live_iterator_does_not_hang(tmp_path):
    script = tmp_path / "prog.py"
    script.write_text(textwrap.dedent("""
        import tapegrad as tg
        from tapegrad.utils.data import DataLoader, RandomSampler, TensorDataset
        ds = TensorDataset(tg.arange(100.0), tg.arange(100))
        loader = DataLoader(ds, batch_size=8, num_workers=2,
                            sampler=RandomSampler(ds, replacement=True, num_samples=int(1e10)))
        it = iter(loader)                 # never finished, never closed
        x, y = next(it)
        persistent = iter(DataLoader(ds, batch_size=8, num_workers=2, persistent_workers=True))
        next(persistent)
        print("ok", x.shape[0])
    """))
    env = dict(os.environ, PYTHONPATH=os.getcwd())
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=env, cwd=os.getcwd())
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok 8"
