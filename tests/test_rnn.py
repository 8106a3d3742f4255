"""Recurrent layers and cells against PyTorch from identical weights: outputs, final
states and gradients w.r.t. the input, the initial states and every parameter; packed
sequences; state-dict interchange; error cases; reprs."""
import numpy as np
import pytest
import torch

import tapegrad as tg
from tapegrad.nn.utils import rnn as tgu

TOL = {np.float64: dict(rtol=1e-10, atol=1e-12), np.float32: dict(rtol=1e-4, atol=1e-5)}
TDT = {np.float64: torch.float64, np.float32: torch.float32}
GDT = {np.float64: tg.float64, np.float32: tg.float32}
MODULES = {"RNN": (tg.nn.RNN, torch.nn.RNN), "LSTM": (tg.nn.LSTM, torch.nn.LSTM),
           "GRU": (tg.nn.GRU, torch.nn.GRU)}


def close(a, b, dtype, what):
    a = np.asarray(a.numpy(force=True) if isinstance(a, tg.Tensor) else a)
    b = b.detach().numpy()
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, err_msg=what, **TOL[dtype])


def twins(kind, *args, dtype=np.float64, **kwargs):
    """A torch module and the tapegrad one with torch's weights (via numpy, strict)."""
    tg_cls, th_cls = MODULES.get(kind) or CELLS[kind]
    th = th_cls(*args, **kwargs, dtype=TDT[dtype])
    ours = tg_cls(*args, **kwargs, dtype=GDT[dtype])
    sd = {k: tg.tensor(v.detach().numpy().copy()) for k, v in th.state_dict().items()}
    ours.load_state_dict(sd, strict=True)
    return ours, th


def pair(rng, shape, dtype):
    a = rng.standard_normal(shape).astype(dtype)
    return tg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)


def states_list(st):
    return list(st) if isinstance(st, tuple) else [st]


def backward_both(rng, outs, th_outs, dtype):
    """One scalar loss per library: sum of every output times the same random weights."""
    loss, th_loss = 0, 0
    for o, t in zip(outs, th_outs):
        w = rng.standard_normal(tuple(t.shape)).astype(dtype)
        loss = loss + (o * tg.tensor(w)).sum()
        th_loss = th_loss + (t * torch.tensor(w)).sum()
    loss.backward()
    th_loss.backward()


def check_param_grads(ours, th, dtype, what):
    tp = dict(th.named_parameters())
    names = [n for n, _ in ours.named_parameters()]
    assert names == list(tp), f"{what}: parameter order {names} vs torch {list(tp)}"
    for name, p in ours.named_parameters():
        close(p.grad, tp[name].grad, dtype, f"{what}: grad of {name}")


def configs(kind, n, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        c = dict(num_layers=int(rng.integers(1, 3)), bidirectional=bool(rng.integers(2)),
                 batch_first=bool(rng.integers(2)), bias=bool(rng.random() < 0.75),
                 with_h0=bool(rng.integers(2)), unbatched=bool(rng.random() < 0.25))
        if kind == "LSTM" and rng.random() < 0.4:
            c["proj_size"] = 2
        if kind == "RNN" and rng.random() < 0.5:
            c["nonlinearity"] = "relu"
        out.append(c)
    return out


CASES = [(k, i, c) for s, k in enumerate(MODULES) for i, c in enumerate(configs(k, 10, 13 + s))]


def run_case(kind, cfg, dtype, seed):
    cfg = dict(cfg)
    with_h0, unbatched = cfg.pop("with_h0"), cfg.pop("unbatched")
    I, H, T, B = 3, 5, 4, 2
    ours, th = twins(kind, I, H, **cfg, dtype=dtype)
    rng = np.random.default_rng(seed)
    D = 2 if cfg["bidirectional"] else 1
    L, P = cfg["num_layers"], cfg.get("proj_size", 0) or H
    shape = (T, I) if unbatched else ((B, T, I) if cfg["batch_first"] else (T, B, I))
    x, xt = pair(rng, shape, dtype)
    args, th_args, leaves = [x], [xt], [(x, xt, "input")]
    if with_h0:
        hs = (L * D, P) if unbatched else (L * D, B, P)
        h0, h0t = pair(rng, hs, dtype)
        leaves.append((h0, h0t, "h0"))
        if kind == "LSTM":
            c0, c0t = pair(rng, hs[:-1] + (H,), dtype)
            leaves.append((c0, c0t, "c0"))
            args.append((h0, c0))
            th_args.append((h0t, c0t))
        else:
            args.append(h0)
            th_args.append(h0t)
    out, st = ours(*args)
    out_t, st_t = th(*th_args)
    what = f"{kind}{cfg} h0={with_h0} unbatched={unbatched} {np.dtype(dtype).name}"
    close(out, out_t, dtype, f"{what}: output")
    for k, (s, t) in enumerate(zip(states_list(st), states_list(st_t))):
        close(s, t, dtype, f"{what}: final state {k}")
    backward_both(rng, [out] + states_list(st), [out_t] + states_list(st_t), dtype)
    for a, t, name in leaves:
        close(a.grad, t.grad, dtype, f"{what}: grad of {name}")
    check_param_grads(ours, th, dtype, what)


@pytest.mark.parametrize("kind,i,cfg", CASES, ids=[f"{k}-{i}" for k, i, _ in CASES])
def test_layer_matches_torch_float64(kind, i, cfg):
    run_case(kind, cfg, np.float64, seed=i)


@pytest.mark.parametrize("kind,i,cfg", CASES[::3], ids=[f"{k}-{i}" for k, i, _ in CASES[::3]])
def test_layer_matches_torch_float32(kind, i, cfg):
    run_case(kind, cfg, np.float32, seed=100 + i)


@pytest.mark.parametrize("kind", list(MODULES))
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("unbatched", [False, True])
def test_every_config_axis_covered(kind, bidirectional, unbatched):
    """Fixed corners the random configs may miss: 2 layers, no bias, batch_first, h0
    given (with projections for LSTM), batched and unbatched."""
    cfg = dict(num_layers=2, bidirectional=bidirectional, batch_first=True, bias=False,
               with_h0=True, unbatched=unbatched)
    if kind == "LSTM":
        cfg["proj_size"] = 3
    run_case(kind, cfg, np.float64, seed=7)


# ---- cells --------------------------------------------------------------------------------
CELLS = {"RNNCell": (tg.nn.RNNCell, torch.nn.RNNCell), "LSTMCell": (tg.nn.LSTMCell,
                                                                   torch.nn.LSTMCell),
         "GRUCell": (tg.nn.GRUCell, torch.nn.GRUCell)}
CELL_CASES = [(k, b, h, u, nl) for k in CELLS for b in (True, False) for h in (True, False)
              for u in (False, True) for nl in (("tanh", "relu") if k == "RNNCell" else (None,))]


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind,bias,with_h,unbatched,nl", CELL_CASES)
def test_cell_matches_torch(kind, bias, with_h, unbatched, nl, dtype):
    kw = {"nonlinearity": nl} if nl else {}
    ours, th = twins(kind, 3, 4, bias=bias, **kw, dtype=dtype)
    rng = np.random.default_rng(1)
    lead = () if unbatched else (2,)
    x, xt = pair(rng, lead + (3,), dtype)
    leaves = [(x, xt, "input")]
    h = ht = None
    if with_h:
        h, ht = pair(rng, lead + (4,), dtype)
        leaves.append((h, ht, "h"))
        if kind == "LSTMCell":
            c, ct = pair(rng, lead + (4,), dtype)
            leaves.append((c, ct, "c"))
            h, ht = (h, c), (ht, ct)
    # Two steps, so that the state fed back in is a graph output as in a real loop.
    out, out_t = ours(x, h), th(xt, ht)
    out, out_t = ours(x * 0.5, out), th(xt * 0.5, out_t)
    outs, outs_t = states_list(out), states_list(out_t)
    for k, (a, b) in enumerate(zip(outs, outs_t)):
        close(a, b, dtype, f"{kind} output {k}")
    backward_both(rng, outs, outs_t, dtype)
    for a, t, name in leaves:
        close(a.grad, t.grad, dtype, f"{kind}: grad of {name}")
    check_param_grads(ours, th, dtype, kind)


def test_cells_equal_one_layer_rnn():
    """A cell stepped over a sequence is the one-layer module (same parameter names)."""
    for cell_cls, mod_cls in ((tg.nn.LSTMCell, tg.nn.LSTM), (tg.nn.GRUCell, tg.nn.GRU),
                              (tg.nn.RNNCell, tg.nn.RNN)):
        mod = mod_cls(3, 4, dtype=tg.float64)
        cell = cell_cls(3, 4, dtype=tg.float64)
        cell.load_state_dict({k[:-3]: v for k, v in mod.state_dict().items()})
        x = tg.randn(5, 2, 3, dtype=tg.float64)
        out, _ = mod(x)
        state = None
        for t in range(5):
            state = cell(x[t], state)
            h = state[0] if isinstance(state, tuple) else state
            np.testing.assert_allclose(h.numpy(force=True), out.data[t], rtol=1e-12)


# ---- packed sequences -----------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", list(MODULES))
@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_packed_input_matches_torch(kind, bidirectional, enforce_sorted, dtype):
    kw = dict(num_layers=2, bidirectional=bidirectional)
    if kind == "LSTM" and bidirectional:
        kw["proj_size"] = 2
    ours, th = twins(kind, 3, 4, **kw, dtype=dtype)
    rng = np.random.default_rng(3)
    lengths = [5, 3, 3, 1] if enforce_sorted else [2, 5, 1, 3]
    x, xt = pair(rng, (5, 4, 3), dtype)
    D, P = (2 if bidirectional else 1), kw.get("proj_size", 4)
    h0, h0t = pair(rng, (2 * D, 4, P), dtype)
    leaves = [(x, xt, "input"), (h0, h0t, "h0")]
    hx, hxt = h0, h0t
    if kind == "LSTM":
        c0, c0t = pair(rng, (2 * D, 4, 4), dtype)
        leaves.append((c0, c0t, "c0"))
        hx, hxt = (h0, c0), (h0t, c0t)
    p = tgu.pack_padded_sequence(x, lengths, enforce_sorted=enforce_sorted)
    pt = torch.nn.utils.rnn.pack_padded_sequence(xt, lengths, enforce_sorted=enforce_sorted)
    np.testing.assert_array_equal(p.batch_sizes.numpy(force=True), pt.batch_sizes.numpy())
    if not enforce_sorted:
        np.testing.assert_array_equal(p.sorted_indices.numpy(force=True), pt.sorted_indices.numpy())
        np.testing.assert_array_equal(p.unsorted_indices.numpy(force=True), pt.unsorted_indices.numpy())
    out, st = ours(p, hx)
    out_t, st_t = th(pt, hxt)
    assert isinstance(out, tgu.PackedSequence)
    close(out.data, out_t.data, dtype, f"{kind} packed output")
    for k, (s, t) in enumerate(zip(states_list(st), states_list(st_t))):
        close(s, t, dtype, f"{kind} packed final state {k}")
    padded, lens = tgu.pad_packed_sequence(out, batch_first=True, padding_value=-2.0)
    padded_t, lens_t = torch.nn.utils.rnn.pad_packed_sequence(out_t, batch_first=True,
                                                              padding_value=-2.0)
    close(padded, padded_t, dtype, "padded output")
    np.testing.assert_array_equal(lens.numpy(force=True), lens_t.numpy())
    backward_both(rng, [padded] + states_list(st), [padded_t] + states_list(st_t), dtype)
    for a, t, name in leaves:
        close(a.grad, t.grad, dtype, f"{kind} packed: grad of {name}")
    check_param_grads(ours, th, dtype, f"{kind} packed")


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(batch_first, padding_side):
    rng = np.random.default_rng(0)
    seqs = [rng.standard_normal((n, 2, 3)) for n in (3, 5, 1)]
    ours = [tg.tensor(s, requires_grad=True) for s in seqs]
    th = [torch.tensor(s, requires_grad=True) for s in seqs]
    a = tgu.pad_sequence(ours, batch_first=batch_first, padding_value=7.0,
                         padding_side=padding_side)
    b = torch.nn.utils.rnn.pad_sequence(th, batch_first=batch_first, padding_value=7.0,
                                        padding_side=padding_side)
    close(a, b, np.float64, "pad_sequence")
    backward_both(rng, [a], [b], np.float64)
    for s, t in zip(ours, th):
        close(s.grad, t.grad, np.float64, "pad_sequence grad")


def test_pack_sequence_and_unpack_round_trip():
    rng = np.random.default_rng(0)
    seqs = [rng.standard_normal((n, 2)) for n in (2, 4, 4, 1)]
    for enforce_sorted in (False,):
        p = tgu.pack_sequence([tg.tensor(s) for s in seqs], enforce_sorted=enforce_sorted)
        pt = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in seqs],
                                              enforce_sorted=enforce_sorted)
        close(p.data, pt.data, np.float64, "pack_sequence data")
        for field in ("batch_sizes", "sorted_indices", "unsorted_indices"):
            np.testing.assert_array_equal(getattr(p, field).numpy(force=True), getattr(pt, field).numpy())
        back = tgu.unpack_sequence(p)
        for s, b in zip(seqs, back):
            np.testing.assert_array_equal(b.numpy(force=True), s)
    sorted_seqs = sorted(seqs, key=len, reverse=True)
    p = tgu.pack_sequence([tg.tensor(s) for s in sorted_seqs])
    pt = torch.nn.utils.rnn.pack_sequence([torch.tensor(s) for s in sorted_seqs])
    assert p.sorted_indices is None and p.unsorted_indices is None
    close(p.data, pt.data, np.float64, "pack_sequence sorted")
    data, bs, si, ui = p  # unpacks like torch's namedtuple
    assert data is p.data and bs is p.batch_sizes and si is None and ui is None
    assert p.batch_sizes.dtype == np.int64


def test_pad_packed_total_length_and_lengths():
    x = tg.randn(3, 2, 1, dtype=tg.float64)
    p = tgu.pack_padded_sequence(x, tg.tensor([2, 3]), enforce_sorted=False)
    padded, lengths = tgu.pad_packed_sequence(p, total_length=6)
    assert tuple(padded.shape) == (6, 2, 1)
    assert lengths.tolist() == [2, 3]
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 3"):
        tgu.pad_packed_sequence(p, total_length=2)


def test_packing_errors():
    x = tg.randn(3, 4, 2)
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        tgu.pack_padded_sequence(x, [2, 3, 2, 1])
    with pytest.raises(RuntimeError, match="greater than 0"):
        tgu.pack_padded_sequence(x, [3, 2, 2, 0])
    with pytest.raises(RuntimeError, match=r"got 3 \(batch_size=4\)"):
        tgu.pack_padded_sequence(x, [3, 2, 1])
    with pytest.raises(RuntimeError, match="longest length 4 exceeds the padded length 3"):
        tgu.pack_padded_sequence(x, [4, 3, 2, 1])
    with pytest.raises(RuntimeError, match="empty list"):
        tgu.pad_sequence([])
    with pytest.raises(RuntimeError, match="padding_side"):
        tgu.pad_sequence([tg.ones(2)], padding_side="top")
    with pytest.raises(RuntimeError, match=r"sequence 1 has shape \(3, 4\)"):
        tgu.pad_sequence([tg.ones(2, 3), tg.ones(3, 4)])


# ---- dropout, state dicts, reprs, errors ----------------------------------------------------
def test_dropout_zero_is_deterministic_and_dropout_only_in_training():
    m = tg.nn.LSTM(3, 4, num_layers=2, dropout=0.0)
    x = tg.randn(5, 2, 3)
    np.testing.assert_array_equal(m(x)[0].numpy(force=True), m(x)[0].numpy(force=True))
    d = tg.nn.GRU(3, 4, num_layers=3, dropout=0.5)
    out, h = d(x)
    assert tuple(out.shape) == (5, 2, 4) and tuple(h.shape) == (3, 2, 4) and d.training
    d.eval()
    np.testing.assert_array_equal(d(x)[0].numpy(force=True), d(x)[0].numpy(force=True))
    with pytest.warns(UserWarning, match="num_layers greater than 1"):
        tg.nn.RNN(3, 4, dropout=0.2)


@pytest.mark.parametrize("kind,kw", [("RNN", {}), ("RNN", {"nonlinearity": "relu"}),
                                     ("LSTM", {"proj_size": 2}), ("LSTM", {"bias": False}),
                                     ("GRU", {"bidirectional": True})])
def test_state_dict_interchanges_both_ways(kind, kw):
    ours, th = twins(kind, 3, 4, num_layers=2, **kw, dtype=np.float32)
    sd, sdt = ours.state_dict(), th.state_dict()
    assert list(sd) == list(sdt)
    assert [tuple(v.shape) for v in sd.values()] == [tuple(v.shape) for v in sdt.values()]
    fresh = MODULES[kind][1](3, 4, num_layers=2, **kw)
    fresh.load_state_dict({k: torch.tensor(v.numpy(force=True).copy()) for k, v in sd.items()}, strict=True)
    x = np.random.default_rng(0).standard_normal((4, 2, 3)).astype(np.float32)
    close(ours(tg.tensor(x))[0], fresh(torch.tensor(x))[0], np.float32, "reloaded in torch")


def test_initialisation_is_uniform_in_torch_bounds():
    m = tg.nn.LSTM(10, 25, num_layers=2, bidirectional=True, proj_size=5)
    bound = 1 / np.sqrt(25)
    for name, p in m.named_parameters():
        a = p.data
        assert a.min() >= -bound and a.max() <= bound, name
        assert a.std() > bound / 3, name  # filled, not left at zeros
    c = tg.nn.GRUCell(7, 16)
    assert np.abs(c.weight_hh.numpy(force=True)).max() <= 0.25


def test_reprs_match_torch():
    for kind, args, kw in [("LSTM", (3, 4, 2), dict(bias=False, batch_first=True, dropout=0.5,
                                                    bidirectional=True, proj_size=2)),
                           ("RNN", (3, 4), dict(nonlinearity="relu")), ("GRU", (3, 4), {}),
                           ("RNNCell", (3, 4), dict(bias=False, nonlinearity="relu")),
                           ("LSTMCell", (3, 4), {}), ("GRUCell", (5, 6), dict(bias=False))]:
        tg_cls, th_cls = MODULES.get(kind) or CELLS[kind]
        assert repr(tg_cls(*args, **kw)) == repr(th_cls(*args, **kw))


def test_rnn_positional_nonlinearity_and_attributes():
    m = tg.nn.RNN(3, 4, 2, "relu", False)
    assert m.nonlinearity == "relu" and m.mode == "RNN_RELU" and m.bias is False
    assert m.num_layers == 2 and m.all_weights[1][0] is m.weight_ih_l1
    assert m._flat_weights_names == ["weight_ih_l0", "weight_hh_l0", "weight_ih_l1",
                                     "weight_hh_l1"]
    m.flatten_parameters()  # accepted (a no-op on CPU, as in torch)


@pytest.mark.parametrize("make,msg", [
    (lambda: tg.nn.RNN(3, 4, nonlinearity="gelu"), "Unknown nonlinearity 'gelu'"),
    (lambda: tg.nn.GRU(3, 4, proj_size=2), "proj_size argument is only supported for LSTM"),
    (lambda: tg.nn.LSTM(3, 4, proj_size=4), "proj_size has to be smaller than hidden_size"),
    (lambda: tg.nn.LSTM(3, 4, proj_size=-1), "proj_size should be a positive integer"),
    (lambda: tg.nn.LSTM(3, 0), "hidden_size must be greater than zero"),
    (lambda: tg.nn.LSTM(3, 4, 0), "num_layers must be greater than zero"),
    (lambda: tg.nn.LSTM(3, 4, dropout=1.5), "dropout should be a number in range"),
])
def test_constructor_errors(make, msg):
    with pytest.raises(ValueError, match=msg):
        make()


def test_constructor_type_errors():
    with pytest.raises(TypeError, match="hidden_size should be of type int, got: float"):
        tg.nn.GRU(3, 4.0)
    with pytest.raises(TypeError, match="bias should be of type bool"):
        tg.nn.LSTM(3, 4, bias=1)


def test_forward_errors():
    m = tg.nn.LSTM(3, 4, num_layers=2)
    with pytest.raises(ValueError, match="LSTM: Expected input to be 2D or 3D, got 4D"):
        m(tg.randn(1, 2, 3, 4))
    with pytest.raises(RuntimeError, match="input.size.-1. must be equal to input_size. "
                                           "Expected 3, got 5"):
        m(tg.randn(4, 2, 5))
    with pytest.raises(ValueError, match="does not match weight dtype"):
        m(tg.randn(4, 2, 3, dtype=tg.float64))
    h = tg.zeros(2, 2, 4)
    with pytest.raises(RuntimeError,
                       match=r"Expected hidden\[0\] size \(2, 3, 4\), got \[2, 2, 4\]"):
        m(tg.randn(4, 3, 3), (h, tg.zeros(2, 3, 4)))
    with pytest.raises(RuntimeError, match=r"Expected hidden\[1\] size \(2, 2, 4\)"):
        m(tg.randn(4, 2, 3), (h, tg.zeros(2, 2, 5)))
    with pytest.raises(RuntimeError, match="hx and cx should also be 3-D but got .2-D, 2-D."):
        m(tg.randn(4, 2, 3), (tg.zeros(2, 4), tg.zeros(2, 4)))
    with pytest.raises(TypeError, match="LSTM: input must be a Tensor or a PackedSequence, got "
                                        "ndarray"):
        m(np.zeros((4, 2, 3), np.float32))
    with pytest.raises(RuntimeError, match="Expected sequence length to be larger than 0"):
        m(tg.zeros(0, 2, 3))
    assert tuple(m(tg.zeros(5, 0, 3))[0].shape) == (5, 0, 4)  # an empty batch is fine
    packed = tgu.pack_sequence([tg.randn(3, 3), tg.randn(2, 3)])
    with pytest.raises(TypeError, match=r"LSTM: hx must be a tuple \(h_0, c_0\), got Tensor"):
        m(packed, tg.zeros(2, 2, 4))
    g = tg.nn.GRU(3, 4)
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D"):
        g(tg.randn(4, 3), tg.zeros(1, 1, 4))
    with pytest.raises(RuntimeError, match=r"Expected hidden size \(1, 2, 4\), got \[1, 2, 3\]"):
        g(tg.randn(4, 2, 3), tg.zeros(1, 2, 3))
    c = tg.nn.RNNCell(3, 4)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 5 expected 3"):
        c(tg.ones(2, 5))
    with pytest.raises(RuntimeError, match="Input batch size 2 doesn't match hidden0 batch size 3"):
        c(tg.ones(2, 3), tg.ones(3, 4))
    with pytest.raises(RuntimeError,
                       match="hidden0 has inconsistent hidden_size: got 5, expected 4"):
        c(tg.ones(2, 3), tg.ones(2, 5))
    with pytest.raises(RuntimeError, match="lstm_cell expects two hidden states"):
        tg.nn.LSTMCell(3, 4)(tg.ones(2, 3), (tg.ones(2, 4),))
    with pytest.raises(ValueError, match="GRUCell: Expected input to be 1D or 2D, got 3D"):
        tg.nn.GRUCell(3, 4)(tg.ones(1, 2, 3))
    with pytest.raises(RuntimeError, match="Unknown nonlinearity: gelu"):
        tg.nn.RNNCell(3, 4, nonlinearity="gelu")(tg.ones(2, 3))


# ---- higher order, packed without h0, copies ------------------------------------------------
@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_gradcheck_and_gradgradcheck(kind):
    """Composite of differentiable ops: second derivatives come from the same engine."""
    kw = {"proj_size": 2} if kind == "LSTM" else {}
    m = getattr(tg.nn, kind)(2, 3, num_layers=2, bidirectional=True, dtype=tg.float64, **kw)
    x = tg.randn(3, 2, 2, dtype=tg.float64, requires_grad=True)

    def f(x):
        out, _ = m(tgu.pack_padded_sequence(x, [3, 2]))
        return out.data

    assert tg.autograd.gradcheck(f, (x,))
    assert tg.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("kind", list(MODULES))
def test_packed_without_h0_and_batch_first(kind):
    ours, th = twins(kind, 3, 4, batch_first=True, dtype=np.float64)
    rng = np.random.default_rng(5)
    x, xt = pair(rng, (3, 4, 3), np.float64)
    lengths = tg.tensor([2, 4, 1])  # a tensor of lengths, unsorted
    out, st = ours(tgu.pack_padded_sequence(x, lengths, batch_first=True,
                                            enforce_sorted=False))
    out_t, st_t = th(torch.nn.utils.rnn.pack_padded_sequence(
        xt, torch.tensor([2, 4, 1]), batch_first=True, enforce_sorted=False))
    close(out.data, out_t.data, np.float64, f"{kind} packed output")
    for s, t in zip(states_list(st), states_list(st_t)):
        close(s, t, np.float64, f"{kind} packed final state")
    backward_both(rng, [out.data] + states_list(st), [out_t.data] + states_list(st_t),
                  np.float64)
    close(x.grad, xt.grad, np.float64, f"{kind} packed input grad")


def test_packed_sequence_conversions_and_copies():
    import copy
    p = tgu.pack_sequence([tg.ones(3, 2), tg.ones(1, 2)])
    assert p.double().numpy(force=True).dtype == np.float64 and p.float() is p
    assert p.to(tg.float32) is p and not p.is_cuda and not p.is_pinned()
    legacy = tgu.PackedSequence((p.data, p.batch_sizes))
    assert legacy.batch_sizes is p.batch_sizes and legacy.sorted_indices is None
    m = tg.nn.LSTM(2, 3)
    m2 = copy.deepcopy(m)
    np.testing.assert_array_equal(m(p)[0].numpy(force=True).numpy(force=True), m2(p)[0].numpy(force=True).numpy(force=True))
