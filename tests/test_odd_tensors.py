"""Odd tensors (issue 14), each compared with PyTorch: NaN in the forward of max/min-like
ops reaching the gradients, empty tensors through reductions, softmax and batch norm,
out-of-range indices, and no reference cycles from a GradScaler training step."""
import gc

import numpy as np
import pytest
import torch

import tapegrad as tg

nan = float("nan")


def _grads(lib, fn, arrays, dtype):
    """Values and input gradients of sum(fn(*inputs)) with library `lib`."""
    dt = getattr(lib, dtype)
    xs = [lib.tensor(a, dtype=dt, requires_grad=True) for a in arrays]
    out = fn(lib, *xs)
    out = out[0] if isinstance(out, tuple) else out
    out.sum().backward()
    return out.detach().numpy(), [x.grad.numpy() for x in xs]


def _same(fn, arrays, dtype="float64"):
    got, gg = _grads(tg, fn, arrays, dtype)
    want, wg = _grads(torch, fn, arrays, dtype)
    rtol = 1e-10 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(got, want, rtol=rtol, equal_nan=True)
    assert len(gg) == len(wg)
    for a, b in zip(gg, wg):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, equal_nan=True)


# ---- NaN in the forward: 10 op/input pairs (maximum/minimum count both inputs) ----------
ROW = [1.0, nan, 2.0]
TWO_NAN = [nan, 3.0, nan]
MAT = [[1.0, nan, nan], [2.0, 3.0, 1.0], [0.5, 0.5, 0.25]]
NAN_CASES = {
    "max()": (lambda lib, x: x.max(), [ROW]),
    "max() two nans": (lambda lib, x: x.max(), [TWO_NAN]),
    "min()": (lambda lib, x: x.min(), [ROW]),
    "min() two nans": (lambda lib, x: lib.min(x), [TWO_NAN]),
    "amax": (lambda lib, x: lib.amax(x), [ROW]),
    "amax(dim)": (lambda lib, x: lib.amax(x, 1), [MAT]),
    "amin": (lambda lib, x: x.amin(), [ROW]),
    "amin(dim, keepdim)": (lambda lib, x: x.amin(0, keepdim=True), [MAT]),
    "max(dim)": (lambda lib, x: x.max(1), [MAT]),
    "min(dim)": (lambda lib, x: x.min(dim=1, keepdim=True), [MAT]),
    "maximum": (lambda lib, x, y: lib.maximum(x, y),
                [[1.0, nan, 2.0, nan, 4.0], [nan, 1.0, 3.0, nan, 4.0]]),
    "minimum": (lambda lib, x, y: lib.minimum(x, y),
                [[1.0, nan, 2.0, nan, 4.0], [nan, 1.0, 3.0, nan, 4.0]]),
    "maximum broadcast": (lambda lib, x, y: lib.maximum(x, y), [[[nan], [1.0]], [0.5, nan]]),
    "max(x, y)": (lambda lib, x, y: lib.max(x, y), [[nan, 1.0], [2.0, nan]]),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", sorted(NAN_CASES))
def test_nan_reaches_gradients_as_in_torch(case, dtype):
    fn, arrays = NAN_CASES[case]
    _same(fn, arrays, dtype)


def test_nan_max_gradient_is_not_zero():
    # the example: the gradient was silently all zeros
    x = tg.tensor([1.0, nan, 2.0], requires_grad=True)
    x.max().backward()
    assert x.grad.tolist() == [0.0, 1.0, 0.0]
    x = tg.tensor([1.0, nan, 2.0], requires_grad=True)
    x.amax().backward()
    assert np.isnan(x.grad.numpy()).all()  # torch: mask * (g / 0)


@pytest.mark.parametrize("case", ["amax(dim)", "maximum", "max()"])
def test_nan_cases_under_create_graph(case):
    """The rules are written once against xp: under create_graph they give the same
    first-order gradients."""
    fn, arrays = NAN_CASES[case]
    xs = [tg.tensor(a, dtype=tg.float64, requires_grad=True) for a in arrays]
    out = fn(tg, *xs)
    gs = tg.autograd.grad(out.sum(), xs, create_graph=True)
    _, want = _grads(torch, fn, arrays, "float64")
    for g, w in zip(gs, want):
        np.testing.assert_allclose(g.detach().numpy(), w, equal_nan=True)


# ---- empty tensors ----------------------------------------------------------------------
EMPTY = np.zeros((0, 3))
EMPTY_CASES = {
    "prod()": lambda lib, x: x.prod(),
    "prod(0)": lambda lib, x: x.prod(0),
    "prod(1)": lambda lib, x: lib.prod(x, 1),
    "logsumexp(0)": lambda lib, x: x.logsumexp(0),
    "logsumexp(1)": lambda lib, x: lib.logsumexp(x, 1),
    "logsumexp((0, 1))": lambda lib, x: lib.logsumexp(x, (0, 1)),
    "softmax(0)": lambda lib, x: x.softmax(0),
    "softmax(1)": lambda lib, x: lib.softmax(x, 1),
    "log_softmax(0)": lambda lib, x: x.log_softmax(0),
    "amax(1)": lambda lib, x: x.amax(1),
    "sum(0)": lambda lib, x: x.sum(0),
}


@pytest.mark.parametrize("case", sorted(EMPTY_CASES))
def test_empty_tensor_as_torch(case):
    _same(lambda lib, x: EMPTY_CASES[case](lib, x), [EMPTY])


def test_empty_prod_backward_create_graph():
    x = tg.zeros(0, 3, dtype=tg.float64, requires_grad=True)
    (g,) = tg.autograd.grad(x.prod(), x, create_graph=True)
    assert tuple(g.shape) == (0, 3)


def _bn_run(lib, shape, training):
    lib.manual_seed(0)
    bn = lib.nn.BatchNorm1d(3)
    bn.train(training)
    x = lib.zeros(*shape, requires_grad=True)
    y = bn(x)
    params = [x, bn.weight, bn.bias]
    grads = lib.autograd.grad(y.sum(), params, allow_unused=True)
    return (tuple(y.shape), [None if g is None else g.numpy() for g in grads],
            bn.running_mean.numpy(), bn.running_var.numpy(), int(bn.num_batches_tracked))


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(0, 3), (0, 3, 4), (2, 3, 0)])
def test_batchnorm1d_empty_batch_as_torch(shape, training):
    got, want = _bn_run(tg, shape, training), _bn_run(torch, shape, training)
    assert got[0] == want[0]
    for a, b in zip(got[1], want[1]):
        assert a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(got[2], want[2])
    np.testing.assert_array_equal(got[3], want[3])
    assert got[4] == want[4]


def test_batchnorm1d_one_value_per_channel_raises_as_torch():
    for lib in (tg, torch):
        with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
            lib.nn.BatchNorm1d(3)(lib.zeros(1, 3))


# ---- index_select: out-of-range (also negative) indices raise ---------------------------
@pytest.mark.parametrize("index", [[-1], [0, -3], [3], [0, 7]])
def test_index_select_out_of_range_raises_as_torch(index):
    x = np.arange(6.0).reshape(3, 2)
    with pytest.raises(IndexError, match="index out of range in self"):
        torch.tensor(x).index_select(0, torch.tensor(index))
    with pytest.raises(IndexError, match="index out of range in self"):
        tg.tensor(x).index_select(0, tg.tensor(index))
    with pytest.raises(IndexError, match="index out of range in self"):
        tg.index_select(tg.tensor(x), 0, tg.tensor(index))


def test_index_select_last_row_by_its_index():
    x = np.arange(6.0).reshape(3, 2)
    got = tg.tensor(x).index_select(0, tg.tensor([2, 0])).numpy()
    want = torch.tensor(x).index_select(0, torch.tensor([2, 0])).numpy()
    np.testing.assert_array_equal(got, want)


# ---- a GradScaler training step leaves no reference cycles ----------------------------
def test_grad_scaler_step_creates_no_cycles():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(4, 8), tg.nn.ReLU(), tg.nn.Linear(8, 2))
    opt = tg.optim.SGD(model.parameters(), lr=0.1)
    scaler = tg.amp.GradScaler()
    x, y = tg.randn(16, 4), tg.randint(0, 2, (16,))

    def step():
        opt.zero_grad()
        loss = tg.nn.functional.cross_entropy(model(x), y)
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        # a list of outputs and an iterator of outputs (scale's other input forms)
        a, b = scaler.scale([loss.detach(), loss.detach()])
        list(scaler.scale(iter([loss.detach()])))

    step()  # first step: lazy initialisation
    gc.collect()
    was = gc.isenabled()
    gc.disable()
    try:
        for _ in range(5):
            step()
        assert gc.collect() == 0
        assert gc.garbage == []
    finally:
        if was:
            gc.enable()


# ---- split / chunk / unbind / cat / stack with many pieces ----------------------------
def _pieces_program(lib, x, w):
    """A program using some pieces of split/chunk/unbind (others unused), stacked and
    concatenated again: every piece's gradient must reach x, zeros where unused."""
    a = x.split(3, dim=1)            # 4 pieces of 3 columns (+1 of 1)
    b = lib.chunk(x, 5, 0)
    c = x.unbind(0)
    d = x.split([2, 0, 5, 6], dim=1)
    y = lib.cat([a[0], a[2] * 2.0, a[-1]], 1).sum() + (b[1] * w[: b[1].shape[0]]).sum()
    y = y + lib.stack(c[::2], 1).pow(2).sum() + d[2].sin().sum() + d[1].sum()
    return y


def test_many_pieces_gradients_as_torch():
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal((10, 13)), rng.standard_normal((10, 13))
    res = []
    for lib in (tg, torch):
        x = lib.tensor(xa, requires_grad=True)
        _pieces_program(lib, x, lib.tensor(wa)).backward()
        res.append(x.grad.numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)


def test_many_pieces_second_order_as_torch():
    rng = np.random.default_rng(1)
    xa, wa = rng.standard_normal((10, 13)), rng.standard_normal((10, 13))
    res = []
    for lib in (tg, torch):
        x = lib.tensor(xa, requires_grad=True)
        (g,) = lib.autograd.grad(_pieces_program(lib, x, lib.tensor(wa)), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        res.append((g.detach().numpy(), gg.numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-12)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-10)


def test_split_backward_is_one_concatenation_not_padding():
    """The pieces are one node: the gradient of x is made once (no full-size array per
    piece, which made a many-piece split quadratic)."""
    x = tg.ones(3000, requires_grad=True)
    parts = x.split(1)
    assert len({id(p.grad_fn) for p in parts}) == 1
    (parts[5] * 2.0 + parts[2999]).sum().backward()
    want = np.zeros(3000)
    want[5], want[2999] = 2.0, 1.0
    np.testing.assert_array_equal(x.grad.numpy(), want)


@pytest.mark.parametrize("pieces", ["split", "unbind", "chunk"])
def test_inplace_on_a_piece_raises_as_torch(pieces):
    for lib in (tg, torch):
        x = lib.ones(4, 2, requires_grad=True).clone()
        p = {"split": lambda: x.split(1), "unbind": lambda: x.unbind(0),
             "chunk": lambda: x.chunk(2)}[pieces]()
        with pytest.raises(RuntimeError, match="output of a function that returns multiple views"):
            p[0].mul_(2)
        with pytest.raises(RuntimeError, match="output of a function that returns multiple views"):
            p[1].view(-1).add_(1)
        with lib.no_grad():
            p[0].mul_(2)  # allowed without recording: it writes into x
        assert float(x[0].sum()) == 4.0


def test_pieces_views_share_memory_and_version():
    x = tg.zeros(4, 2, requires_grad=True).clone()
    a, b = x.split(2)
    with tg.no_grad():
        x.add_(1)
    assert float(a.sum()) == 4.0 and a._version == x._version


@pytest.mark.parametrize("op", ["cat", "stack"])
def test_cat_stack_many_inputs_gradients_as_torch(op):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal((2, 3)) for _ in range(500)]
    w = rng.standard_normal((1000, 3) if op == "cat" else (2, 500, 3))
    res = []
    for lib in (tg, torch):
        xs = [lib.tensor(a, requires_grad=True) for a in arrays]
        y = lib.cat(xs, 0) if op == "cat" else lib.stack(xs, 1)
        (y * lib.tensor(w)).sum().backward()
        res.append(np.stack([x.grad.numpy() for x in xs]))
    np.testing.assert_allclose(res[0], res[1], rtol=1e-12)



# ---- embedding: out-of-range (also negative) indices raise, as in torch ------------------
_EMB_CASES = [(ix, dt) for ix in ([-1], [0, -3], [3], [0, 7], [[0, 2], [1, 0]])
              for dt in (np.int64, np.int32, np.uint8)
              if dt is not np.uint8 or min(np.ravel(ix)) >= 0]  # uint8 has no negatives


@pytest.mark.parametrize("index,dtype", _EMB_CASES)
def test_embedding_index_range_as_torch(index, dtype):
    w = np.arange(6.0).reshape(3, 2)
    idx = np.array(index, dtype=dtype)

    def theirs():
        return torch.nn.functional.embedding(torch.tensor(idx.astype(np.int64)),
                                             torch.tensor(w))

    def ours():
        return tg.nn.functional.embedding(tg.tensor(idx), tg.tensor(w))
    if idx.min() >= 0 and idx.max() < 3:
        np.testing.assert_array_equal(ours().numpy(), theirs().numpy())
        return
    with pytest.raises(IndexError, match="index out of range in self"):
        theirs()
    with pytest.raises(IndexError, match="index out of range in self"):
        ours()
