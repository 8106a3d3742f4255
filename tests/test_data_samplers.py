"""tg.utils.data samplers and the DataLoader's index pipeline, against torch.utils.data.

Index streams of seeded random samplers are tapegrad's own (PCG64, not torch's RNG), so
random samplers are checked for the properties torch guarantees (permutations, lengths,
ranges, weights respected, the same stream for the same seed, the draw structure torch
uses); deterministic pipelines (SequentialSampler, BatchSampler, lists, IterableDataset)
are compared with torch element for element, as are argument errors (type and message).
"""
import itertools

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import tapegrad as tg
from tapegrad.utils import data as tgd


def _errors(make_ours, make_theirs):
    """Both constructions fail with the same exception type; return both messages."""
    with pytest.raises(Exception) as theirs:
        make_theirs()
    with pytest.raises(Exception) as ours:
        make_ours()
    assert type(ours.value) is type(theirs.value), (ours.value, theirs.value)
    return str(ours.value), str(theirs.value)


class Items(tgd.Dataset):
    """Map-style dataset without the batch fast path (samples go through collation)."""

    def __init__(self, n, lib):
        self.n, self.lib = n, lib

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        return self.lib.tensor([float(i), 2.0 * i]), i


def _np(batch):
    if isinstance(batch, (list, tuple)):
        return [_np(b) for b in batch]
    if isinstance(batch, dict):
        return {k: _np(v) for k, v in batch.items()}
    if isinstance(batch, torch.Tensor):
        return batch.numpy()
    if isinstance(batch, tg.Tensor):
        return batch.numpy()
    return batch


def _assert_batches_equal(ours, theirs):
    ours, theirs = list(ours), list(theirs)
    assert len(ours) == len(theirs)
    for a, b in zip(ours, theirs):
        a, b = _np(a), _np(b)
        if isinstance(b, list):
            assert isinstance(a, list) and len(a) == len(b)
            for x, y in zip(a, b):
                np.testing.assert_array_equal(x, y)
                assert np.asarray(x).dtype == np.asarray(y).dtype
        else:
            np.testing.assert_array_equal(a, b)


# ---- deterministic samplers: equal to torch -----------------------------------------
@pytest.mark.parametrize("n", [0, 1, 7])
def test_sequential_sampler_matches_torch(n):
    ours, theirs = tgd.SequentialSampler(range(n)), tud.SequentialSampler(range(n))
    assert list(ours) == list(theirs) and len(ours) == len(theirs)


@pytest.mark.parametrize("n,bs,drop", [(10, 3, False), (10, 3, True), (9, 3, True), (2, 5, False),
                                       (2, 5, True), (0, 4, False), (11, 1, True)])
def test_batch_sampler_chunks_like_torch(n, bs, drop):
    ours = tgd.BatchSampler(tgd.SequentialSampler(range(n)), bs, drop)
    theirs = tud.BatchSampler(tud.SequentialSampler(range(n)), bs, drop)
    assert list(ours) == list(theirs) and len(ours) == len(theirs)
    # any iterable of indices works as the inner sampler
    assert list(tgd.BatchSampler([5, 3, 1, 0], 3, drop)) == list(tud.BatchSampler([5, 3, 1, 0],
                                                                                     3, drop))


@pytest.mark.parametrize("kw", [dict(batch_size=0, drop_last=False),
                                dict(batch_size=True, drop_last=False),
                                dict(batch_size=2.0, drop_last=False),
                                dict(batch_size=-1, drop_last=False),
                                dict(batch_size=2, drop_last=1)])
def test_batch_sampler_errors_match_torch(kw):
    a, b = _errors(lambda: tgd.BatchSampler(range(4), **kw), lambda: tud.BatchSampler(range(4), **kw))
    assert a == b


def test_sampler_base_class():
    with pytest.raises(NotImplementedError):
        iter(tgd.Sampler())
    tgd.Sampler(range(3))  # the old data_source argument is accepted, as torch

    class Evens(tgd.Sampler):
        def __init__(self, n):
            self.n = n

        def __iter__(self):
            return iter(range(0, self.n, 2))

        def __len__(self):
            return (self.n + 1) // 2

    ds = Items(7, tg)
    loader = tgd.DataLoader(ds, batch_size=2, sampler=Evens(7))
    ref = tud.DataLoader(Items(7, torch), batch_size=2, sampler=Evens(7))
    assert len(loader) == len(ref) == 2
    _assert_batches_equal(loader, ref)


# ---- RandomSampler ------------------------------------------------------------------
def test_random_sampler_is_a_permutation_per_pass_and_reproducible():
    ds = range(10)
    s = tgd.RandomSampler(ds, generator=tg.Generator().manual_seed(3))
    first, second = list(s), list(s)
    assert sorted(first) == list(range(10)) and sorted(second) == list(range(10))
    assert first != second  # the generator moves on: a new permutation per pass
    again = tgd.RandomSampler(ds, generator=tg.Generator().manual_seed(3))
    assert list(again) == first and list(again) == second
    # torch's draw structure: a pass is num_samples // n randperms and one more cut to
    # num_samples % n (here empty, but drawn all the same), from the same generator
    g = tg.Generator().manual_seed(3)
    perms = [tg.randperm(10, generator=g).tolist() for _ in range(4)]
    assert first == perms[0] and second == perms[2]


def test_random_sampler_num_samples_without_replacement_takes_several_passes():
    s = tgd.RandomSampler(range(4), num_samples=10, generator=tg.Generator().manual_seed(0))
    out = list(s)
    assert len(out) == len(s) == 10 == len(tud.RandomSampler(range(4), num_samples=10))
    assert sorted(out[:4]) == sorted(out[4:8]) == [0, 1, 2, 3]
    assert len(set(out[8:])) == 2  # the last pass cut short, still without repeats


def test_random_sampler_replacement_draws_in_range_lazily():
    s = tgd.RandomSampler(range(5), replacement=True, num_samples=int(1e10),
                          generator=tg.Generator().manual_seed(1))
    assert len(s) == int(1e10) == len(tud.RandomSampler(range(5), replacement=True,
                                                        num_samples=int(1e10)))
    head = list(itertools.islice(iter(s), 1000))  # must not build 1e10 indices first
    assert set(head) == {0, 1, 2, 3, 4}
    g = tg.Generator().manual_seed(1)  # chunks of 32 uniform draws, as torch
    expect = np.concatenate([tg.randint(0, 5, (32,), generator=g).numpy() for _ in range(32)])
    assert head == expect[:1000].tolist()
    few = list(tgd.RandomSampler(range(5), replacement=True, num_samples=70))
    assert len(few) == 70 and all(0 <= i < 5 for i in few)


def test_random_sampler_without_generator_follows_manual_seed():
    tg.manual_seed(11)
    a = list(tgd.RandomSampler(range(20)))
    tg.manual_seed(11)
    b = list(tgd.RandomSampler(range(20)))
    assert a == b and sorted(a) == list(range(20))
    assert list(tgd.RandomSampler(range(20))) != a  # the global generator moved on


def test_random_sampler_length_follows_the_dataset():
    data = [1, 2, 3]
    s, t = tgd.RandomSampler(data), tud.RandomSampler(data)
    data.append(4)
    assert len(s) == len(t) == 4 and sorted(s) == [0, 1, 2, 3]


@pytest.mark.parametrize("kw", [dict(replacement=1), dict(replacement=None),
                                dict(num_samples=0), dict(num_samples=-2),
                                dict(num_samples=1.5), dict(replacement=True, num_samples=0)])
def test_random_sampler_errors_match_torch(kw):
    a, b = _errors(lambda: tgd.RandomSampler(range(3), **kw),
                   lambda: tud.RandomSampler(range(3), **kw))
    assert a == b


def test_random_sampler_empty_dataset_errors():
    _errors(lambda: tgd.RandomSampler([]), lambda: tud.RandomSampler([]))
    with pytest.raises(ValueError, match="empty data_source"):
        list(tgd.RandomSampler([], num_samples=3))


# ---- SubsetRandomSampler, WeightedRandomSampler ---------------------------------------
def test_subset_random_sampler():
    idx = [10, 20, 30, 40, 50]
    s = tgd.SubsetRandomSampler(idx, generator=tg.Generator().manual_seed(2))
    out = list(s)
    assert sorted(out) == idx and len(s) == len(tud.SubsetRandomSampler(idx)) == 5
    g = tg.Generator().manual_seed(2)
    assert out == [idx[i] for i in tg.randperm(5, generator=g).tolist()]
    assert list(tgd.SubsetRandomSampler(idx, generator=tg.Generator().manual_seed(2))) == out


def test_weighted_random_sampler_respects_weights():
    w = [1.0, 2.0, 3.0, 0.0, 4.0]
    n = 40000
    s = tgd.WeightedRandomSampler(w, n, generator=tg.Generator().manual_seed(0))
    out = np.array(list(s))
    assert len(s) == len(out) == n == len(tud.WeightedRandomSampler(w, n))
    assert out.min() >= 0 and out.max() < 5 and not (out == 3).any()
    p = np.array(w) / sum(w)
    freq = np.bincount(out, minlength=5) / n
    sigma = np.sqrt(p * (1 - p) / n)
    assert (np.abs(freq - p) <= 5 * sigma + 1e-12).all(), (freq, p)
    again = list(tgd.WeightedRandomSampler(w, n, generator=tg.Generator().manual_seed(0)))
    assert again == out.tolist()
    # large num_samples stays lazy
    huge = tgd.WeightedRandomSampler(w, int(1e10))
    assert len(list(itertools.islice(iter(huge), 10))) == 10


def test_weighted_random_sampler_without_replacement():
    w = torch.tensor([0.1, 0.0, 5.0, 1.0, 1.0])
    for seed in range(20):
        out = list(tgd.WeightedRandomSampler(tg.tensor(w.numpy()), 4, replacement=False,
                                             generator=tg.Generator().manual_seed(seed)))
        assert sorted(out) == [0, 2, 3, 4]  # the zero-weight index is never drawn
    # the heavy index comes first most of the time
    firsts = [list(tgd.WeightedRandomSampler(w.tolist(), 1, replacement=False,
                                             generator=tg.Generator().manual_seed(s)))[0]
              for s in range(200)]
    assert firsts.count(2) > 120
    _errors(lambda: list(tgd.WeightedRandomSampler([1.0, 1.0], 3, replacement=False)),
            lambda: list(tud.WeightedRandomSampler([1.0, 1.0], 3, replacement=False)))


@pytest.mark.parametrize("args,kw", [(([1.0, 2.0], 0), {}), (([1.0, 2.0], True), {}),
                                     (([1.0, 2.0], 2.0), {}), (([1.0, 2.0], 2), dict(replacement=0)),
                                     (([[1.0, 2.0]], 2), {})])
def test_weighted_random_sampler_errors_match_torch(args, kw):
    a, b = _errors(lambda: tgd.WeightedRandomSampler(*args, **kw),
                   lambda: tud.WeightedRandomSampler(*args, **kw))
    assert a == b


# ---- DataLoader index pipeline ------------------------------------------------------
@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=4, sampler=[6, 0, 3, 3, 1]),
                                dict(batch_sampler=[[1, 2], [0], [6, 5, 4]]),
                                dict(batch_size=2, collate_fn=lambda b: [s[1] for s in b]),
                                dict(batch_size=None, sampler=[2, 1]),
                                dict(batch_size=2, shuffle=False)])
def test_loader_pipeline_matches_torch(kw):
    ours, theirs = tgd.DataLoader(Items(7, tg), **kw), tud.DataLoader(Items(7, torch), **kw)
    assert len(ours) == len(theirs)
    for attr in ("batch_size", "drop_last"):
        assert getattr(ours, attr) == getattr(theirs, attr)
    assert type(ours.sampler).__name__ == type(theirs.sampler).__name__ or "sampler" in kw
    _assert_batches_equal(ours, theirs)


def test_loader_shuffle_uses_random_sampler_with_the_generator():
    g = tg.Generator().manual_seed(4)
    loader = tgd.DataLoader(Items(9, tg), batch_size=4, shuffle=True, generator=g)
    assert isinstance(loader.sampler, tgd.RandomSampler) and loader.sampler.generator is g
    assert isinstance(loader.batch_sampler, tgd.BatchSampler)
    assert isinstance(tgd.DataLoader(Items(9, tg)).sampler, tgd.SequentialSampler)
    e1 = [i for _, idx in loader for i in idx.tolist()]
    e2 = [i for _, idx in loader for i in idx.tolist()]
    assert sorted(e1) == sorted(e2) == list(range(9)) and e1 != e2
    loader2 = tgd.DataLoader(Items(9, tg), batch_size=4, shuffle=True,
                             generator=tg.Generator().manual_seed(4))
    assert [i for _, idx in loader2 for i in idx.tolist()] == e1


def test_loader_with_huge_random_sampler_is_lazy():
    ds = tgd.TensorDataset(tg.arange(6.0), tg.arange(6))
    loader = tgd.DataLoader(ds, batch_size=4,
                            sampler=tgd.RandomSampler(ds, replacement=True, num_samples=int(1e10)))
    assert len(loader) == len(tud.DataLoader(range(6), batch_size=4, sampler=tud.RandomSampler(
        range(6), replacement=True, num_samples=int(1e10)))) == 2500000000
    x, y = next(iter(loader))
    assert x.shape == (4,) and y.dtype == np.int64 and np.array_equal(x.numpy(), y.numpy())


BAD_LOADER_ARGS = [
    dict(sampler=[0, 1], shuffle=True),
    dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], shuffle=True),
    dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_sampler=[[0]], drop_last=True),
    dict(batch_size=None, drop_last=True),
    dict(num_workers=-1),
    dict(timeout=-1),
    dict(prefetch_factor=2),
    dict(num_workers=1, prefetch_factor=-1),
    dict(persistent_workers=True),
    dict(multiprocessing_context="fork"),
    dict(num_workers=1, multiprocessing_context="nonsense"),
    dict(num_workers=1, multiprocessing_context=3),
    dict(batch_size=0),
    dict(batch_size=1.5),
]


@pytest.mark.parametrize("kw", BAD_LOADER_ARGS)
def test_loader_argument_errors_match_torch(kw):
    a, b = _errors(lambda: tgd.DataLoader(Items(3, tg), **kw),
                   lambda: tud.DataLoader(Items(3, torch), **kw))
    # ours may add the offending value; torch's wording must be in it
    assert b.split(" (got")[0].split(", but got")[0][:40] in a, (a, b)


def test_loader_attributes_are_frozen_like_torch():
    ours, theirs = tgd.DataLoader(Items(3, tg)), tud.DataLoader(Items(3, torch))
    for attr in ["batch_size", "sampler", "batch_sampler", "drop_last", "dataset",
                 "persistent_workers"]:
        a, b = _errors(lambda: setattr(ours, attr, None), lambda: setattr(theirs, attr, None))
        assert a == b
    ours.collate_fn = theirs.collate_fn = lambda b: len(b)  # not frozen in torch either
    assert list(ours) == list(theirs) == [1, 1, 1]


def test_single_process_timeout_is_rejected():
    with pytest.raises(AssertionError, match="timeout"):
        iter(tgd.DataLoader(Items(3, tg), timeout=1))


def test_pin_memory_is_accepted_and_warns_like_torch():
    loader = tgd.DataLoader(Items(5, tg), batch_size=2, pin_memory=True)
    with pytest.warns(UserWarning, match="pin_memory"):  # when iteration starts, as torch
        _assert_batches_equal(loader, tud.DataLoader(Items(5, torch), batch_size=2))


# ---- datasets -----------------------------------------------------------------------
class Count(tgd.IterableDataset):
    def __init__(self, n, lib):
        self.n, self.lib = n, lib

    def __iter__(self):
        return iter({"x": np.float32(i), "i": i} for i in range(self.n))

    def __len__(self):
        return self.n


class TCount(tud.IterableDataset):
    def __init__(self, n):
        self.n = n

    def __iter__(self):
        return iter({"x": np.float32(i), "i": i} for i in range(self.n))

    def __len__(self):
        return self.n


@pytest.mark.parametrize("kw", [dict(batch_size=3), dict(batch_size=3, drop_last=True),
                                dict(batch_size=None), dict(batch_size=7), dict(batch_size=2,
                                                                               shuffle=False)])
def test_iterable_dataset_matches_torch(kw):
    ours, theirs = tgd.DataLoader(Count(7, tg), **kw), tud.DataLoader(TCount(7), **kw)
    assert len(ours) == len(theirs)
    a, b = list(ours), list(theirs)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        for k in ("x", "i"):
            xa, yb = _np(x[k]), _np(y[k])
            np.testing.assert_array_equal(xa, yb)
            assert np.asarray(xa).dtype == np.asarray(yb).dtype


@pytest.mark.parametrize("kw", [dict(shuffle=True), dict(sampler=[0]), dict(batch_sampler=[[0]])])
def test_iterable_dataset_rejects_samplers_like_torch(kw):
    a, b = _errors(lambda: tgd.DataLoader(Count(3, tg), **kw),
                   lambda: tud.DataLoader(TCount(3), **kw))
    assert a.split("=")[0] == b.split("=")[0]


def test_chain_and_concat_datasets():
    chained = tgd.ChainDataset([Count(2, tg), Count(3, tg)])
    ref = tud.ChainDataset([TCount(2), TCount(3)])
    assert [s["i"] for s in chained] == [s["i"] for s in ref] and len(chained) == len(ref) == 5
    assert [s["i"] for s in Count(1, tg) + Count(2, tg)] == [0, 0, 1]
    _errors(lambda: tgd.ConcatDataset([Count(2, tg)]), lambda: tud.ConcatDataset([TCount(2)]))
    with pytest.raises(NotImplementedError):
        iter(tgd.IterableDataset())


def test_subset_getitems_is_used_for_batches():
    seen = []

    class Batched(Items):
        def __getitems__(self, indices):
            seen.append(list(indices))
            return [self[i] for i in indices]

    sub = tgd.Subset(Batched(9, tg), [8, 6, 4, 2])
    ref = tud.Subset(Items(9, torch), [8, 6, 4, 2])
    _assert_batches_equal(tgd.DataLoader(sub, batch_size=3), tud.DataLoader(ref, batch_size=3))
    assert seen == [[8, 6, 4], [2]]


def test_default_convert_matches_torch():
    samples = [(np.zeros(2), 1, 2.0, "a"), np.float32(3), {"a": np.ones(1, np.int32)},
               [np.ones(1)], np.array(["a"]), tg.ones(2)]
    for s in samples:
        ours = tgd.default_convert(s)
        theirs = tud.default_convert(torch.ones(2) if isinstance(s, tg.Tensor) else s)
        assert type(ours).__name__.lower().replace("tensor", "") == \
            type(theirs).__name__.lower().replace("tensor", "") or isinstance(ours, tg.Tensor)
        if isinstance(theirs, (list, tuple)):
            for a, b in zip(ours, theirs):
                np.testing.assert_array_equal(_np(a), _np(b))
        elif isinstance(theirs, dict):
            assert ours["a"].dtype == theirs["a"].numpy().dtype
        else:
            np.testing.assert_array_equal(_np(ours), _np(theirs))


def test_iterable_dataset_longer_than_its_len_warns_like_torch():
    class Liar(tgd.IterableDataset):
        def __iter__(self):
            return iter(range(4))

        def __len__(self):
            return 2

    class TLiar(tud.IterableDataset):
        def __iter__(self):
            return iter(range(4))

        def __len__(self):
            return 2

    for make, lib in ((Liar, tgd), (TLiar, tud)):
        loader = lib.DataLoader(make(), batch_size=None)
        assert len(loader) == 2
        with pytest.warns(UserWarning, match="was reported to be 2"):
            assert [int(x) for x in loader] == [0, 1, 2, 3]
