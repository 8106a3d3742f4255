"""tg.utils.data: Dataset, TensorDataset, DataLoader (batching, shuffle with a seeded
generator, drop_last, default collation with PyTorch's rules), random_split, Subset."""
import collections

import numpy as np
import pytest
import torch
import torch.utils.data as tud

import tapegrad as tg
from tapegrad.utils.data import (ConcatDataset, DataLoader, Dataset, Subset, TensorDataset,
                                 default_collate, random_split)


def _xy(n=10):
    x = np.arange(n * 3, dtype=np.float32).reshape(n, 3)
    y = np.arange(n) % 3
    return x, y


def _flat(batches):
    return [[np.asarray(f.numpy(force=True) if isinstance(f, tg.Tensor) else f) for f in b] for b in batches]


@pytest.mark.parametrize("batch_size,drop_last", [(1, False), (3, False), (3, True), (4, True),
                                                  (10, False), (16, False), (16, True)])
def test_unshuffled_batches_match_torch(batch_size, drop_last):
    x, y = _xy()
    ours = DataLoader(TensorDataset(tg.tensor(x), tg.tensor(y)), batch_size=batch_size,
                      drop_last=drop_last)
    theirs = tud.DataLoader(tud.TensorDataset(torch.tensor(x), torch.tensor(y)),
                            batch_size=batch_size, drop_last=drop_last)
    assert len(ours) == len(theirs)
    a, b = list(ours), list(theirs)
    assert len(a) == len(b)
    for ba, bb in zip(a, b):
        assert isinstance(ba, list) and len(ba) == 2
        for fa, fb in zip(ba, bb):
            assert isinstance(fa, tg.Tensor) and fa.dtype == fb.numpy().dtype
            np.testing.assert_array_equal(fa.numpy(force=True), fb.numpy())


class ItemOnly(Dataset):
    """A dataset without the batch fast path: samples go through default_collate."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        return self.x[i], int(self.y[i])


def test_fast_path_equals_per_item_collation():
    x, y = _xy(23)
    fast = DataLoader(TensorDataset(tg.tensor(x), tg.tensor(y)), batch_size=5, shuffle=True,
                      generator=tg.Generator().manual_seed(1))
    slow = DataLoader(ItemOnly(x, y), batch_size=5, shuffle=True,
                      generator=tg.Generator().manual_seed(1))
    for (xa, ya), (xb, yb) in zip(fast, slow):
        np.testing.assert_array_equal(xa.numpy(force=True), xb.numpy(force=True))
        np.testing.assert_array_equal(ya.numpy(force=True), yb.numpy(force=True))
        assert ya.dtype == yb.dtype == np.int64


def test_shuffle_is_a_permutation_reproducible_and_changes_per_epoch():
    x, y = _xy(50)
    ds = TensorDataset(tg.tensor(x), tg.tensor(y))
    g = tg.Generator().manual_seed(0)
    loader = DataLoader(ds, batch_size=8, shuffle=True, generator=g)
    epoch1 = np.concatenate([b[1].numpy(force=True) for b in loader])
    epoch2 = np.concatenate([b[1].numpy(force=True) for b in loader])
    assert sorted(np.concatenate([b[0].numpy(force=True)[:, 0] for b in loader]) // 3) == list(range(50))
    assert not np.array_equal(epoch1, epoch2)  # a new permutation every epoch
    again = DataLoader(ds, batch_size=8, shuffle=True, generator=tg.Generator().manual_seed(0))
    np.testing.assert_array_equal(np.concatenate([b[1].numpy(force=True) for b in again]), epoch1)
    tg.manual_seed(5)
    g1 = [b[0].numpy(force=True).copy() for b in DataLoader(ds, batch_size=8, shuffle=True)]
    tg.manual_seed(5)
    g2 = [b[0].numpy(force=True).copy() for b in DataLoader(ds, batch_size=8, shuffle=True)]
    for a, b in zip(g1, g2):
        np.testing.assert_array_equal(a, b)


def test_default_collate_matches_torch():
    samples = [
        {"img": np.full((2, 2), i, np.float32), "label": i, "w": 0.5 * i, "ok": i % 2 == 0,
         "name": f"s{i}", "pair": (i, float(i)), "np": np.int32(i)}
        for i in range(4)]
    ours = default_collate(samples)
    theirs = tud.default_collate(samples)
    assert set(ours) == set(theirs)
    for k in ["img", "label", "w", "ok", "np"]:
        assert ours[k].dtype == theirs[k].numpy().dtype, k
        np.testing.assert_array_equal(ours[k].numpy(force=True), theirs[k].numpy())
    assert ours["name"] == theirs["name"]
    assert isinstance(ours["pair"], list) and isinstance(theirs["pair"], list)
    for a, b in zip(ours["pair"], theirs["pair"]):
        assert a.dtype == b.numpy().dtype
        np.testing.assert_array_equal(a.numpy(force=True), b.numpy())
    P = collections.namedtuple("P", "a b")
    nt = default_collate([P(1, 2.0), P(3, 4.0)])
    assert isinstance(nt, P) and nt.a.tolist() == [1, 3]
    t = default_collate([tg.ones(3), tg.zeros(3)])
    assert t.shape == (2, 3)
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([tg.ones(3), tg.ones(2)])
    with pytest.raises(RuntimeError, match="equal size"):
        default_collate([[1, 2], [1]])


def test_batch_size_none_and_custom_collate_and_sampler():
    x, y = _xy(4)
    ds = ItemOnly(x, y)
    singles = list(DataLoader(ds, batch_size=None))
    assert len(singles) == 4 and singles[2][1] == 2
    loader = DataLoader(ds, batch_size=2, collate_fn=lambda b: [s[1] for s in b])
    assert list(loader) == [[0, 1], [2, 0]]
    loader = DataLoader(ds, batch_size=3, sampler=[3, 2, 1, 0])
    assert [b[1].tolist() for b in loader] == [[0, 2, 1], [0]]
    assert len(loader) == 2
    loader = DataLoader(ds, batch_sampler=[[0, 1], [3]])
    assert [b[1].tolist() for b in loader] == [[0, 1], [0]]


def test_loader_argument_errors():
    ds = ItemOnly(*_xy(4))
    with pytest.raises(ValueError, match="batch_size should be a positive integer"):
        DataLoader(ds, batch_size=0)
    with pytest.raises(ValueError, match="mutually exclusive with shuffle"):
        DataLoader(ds, sampler=[0], shuffle=True)
    with pytest.raises(ValueError, match="num_workers"):
        DataLoader(ds, num_workers=-1)
    with pytest.raises(AssertionError, match="Size mismatch"):
        TensorDataset(tg.zeros(3), tg.zeros(4))


@pytest.mark.parametrize("lengths", [[3, 7], [0.3, 0.7], [0.33, 0.33, 0.34], [0.5, 0.5],
                                     [1, 1, 1, 7], [0.25, 0.25, 0.25, 0.25]])
def test_random_split_sizes_match_torch_and_partition(lengths):
    x, y = _xy(10)
    ds = TensorDataset(tg.tensor(x), tg.tensor(y))
    parts = random_split(ds, lengths, generator=tg.Generator().manual_seed(0))
    ref = tud.random_split(range(10), lengths, generator=torch.Generator().manual_seed(0))
    assert [len(p) for p in parts] == [len(r) for r in ref]
    idx = sorted(i for p in parts for i in p.indices)
    assert idx == list(range(10))
    again = random_split(ds, lengths, generator=tg.Generator().manual_seed(0))
    assert [p.indices for p in parts] == [p.indices for p in again]
    # Subsets keep the fast batch path and agree with per-item indexing
    sub = parts[-1]
    if len(sub):
        (xb, yb), = list(DataLoader(sub, batch_size=len(sub)))
        np.testing.assert_array_equal(xb.numpy(force=True), x[sub.indices])
        np.testing.assert_array_equal(yb.numpy(force=True), y[sub.indices])


def test_random_split_errors_and_subset_concat():
    ds = ItemOnly(*_xy(10))
    with pytest.raises(ValueError, match="Sum of input lengths"):
        random_split(ds, [3, 3])
    sub = Subset(ds, [5, 1])
    assert sub[0][1] == 5 % 3 and len(sub) == 2
    cat = ConcatDataset([sub, ds])
    assert len(cat) == 12 and cat[2][1] == 0 and cat[-1][1] == 9 % 3
    assert len(sub + ds) == 12
    with pytest.raises(NotImplementedError):
        Dataset()[0]
