"""Printing tensors: repr/str against torch's exact strings (a table of shapes, dtypes and
values incl. nan/inf/huge/tiny, summarisation, wrapping), set_printoptions, formatting of
0-d tensors (`f"{loss:.4f}"`), and torch's grad_fn node names."""
import numpy as np
import pytest
import torch

import tapegrad as tg


@pytest.fixture(autouse=True)
def _torch_prefix(monkeypatch):
    # dtypes print as tapegrad.float64; with torch's prefix (same length) the whole
    # string, line wrapping included, must be torch's
    monkeypatch.setattr(tg.printing, "PREFIX", "torch")


def _same(arr, **kw):
    """repr of the same data in both libraries."""
    ours = repr(tg.tensor(arr, **kw))
    theirs = repr(torch.tensor(arr, **kw))
    assert ours == theirs, f"\nours:   {ours}\ntheirs: {theirs}"


_rng = np.random.default_rng(7)
VALUES = {
    "scalar_float": np.array(1.25, np.float32),
    "scalar_zero": np.array(0.0, np.float32),
    "scalar_int": np.array(-3),
    "scalar_bool": np.array(True),
    "whole_floats": np.array([1.0, -2.0, 30.0], np.float32),
    "mixed": np.array([0.01, 0.0607, -1.5], np.float32),
    "tiny": np.array([1e-5, 2.5e-6, 1.0], np.float32),
    "huge": np.array([1e9, 1.0, -3.0], np.float64),
    "ratio": np.array([0.5, 600.0, 1.0], np.float32),
    "nan_inf": np.array([np.nan, np.inf, -np.inf, 1.5, 0.0], np.float32),
    "only_nan": np.array([np.nan, 0.0], np.float32),
    "whole_with_inf": np.array([1.0, np.inf, np.nan], np.float32),
    "neg_zero": np.array([-0.0, 0.0, 1.0], np.float32),
    "ints": np.array([[1, -20, 300], [4, 5, 6]]),
    "int32": np.array([1, 2], np.int32),
    "uint8": np.array([0, 255], np.uint8),
    "bools": np.array([[True, False], [False, True]]),
    "f64": _rng.standard_normal((2, 3)),
    "f16": np.array([0.1, 2.0, -3.5], np.float16),
    "matrix": _rng.standard_normal((4, 5)).astype(np.float32),
    "3d": _rng.standard_normal((2, 3, 4)).astype(np.float32),
    "4d": _rng.standard_normal((2, 2, 2, 3)).astype(np.float32),
    "wide_row": _rng.standard_normal(40).astype(np.float32),
    "wide_sci": (_rng.standard_normal(30) * 1e5).astype(np.float32),
    "long_ints": np.arange(100),
    "summarised_1d": np.arange(2000, dtype=np.float32) / 7,
    "summarised_2d": _rng.standard_normal((50, 40)).astype(np.float32),
    "summarised_3d": np.arange(24000).reshape(20, 30, 40),
    "summarised_short_dim": _rng.standard_normal((3, 500)).astype(np.float32),
    "empty": np.zeros((0,), np.float32),
    "empty_2d": np.zeros((0, 3), np.float32),
    "empty_int": np.zeros((0,), np.int64),
    "empty_f64": np.zeros((2, 0), np.float64),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_repr_matches_torch(name):
    _same(VALUES[name])


@pytest.mark.parametrize("name", ["mixed", "matrix", "ints", "scalar_float"])
def test_requires_grad_and_grad_fn_suffixes(name):
    arr = VALUES[name].astype(np.float64)
    a, b = tg.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
    for x, y in [(a, b), (a * 2, b * 2), (a.exp().sum(), b.exp().sum())]:
        assert repr(x) == repr(y)
        assert str(x) == str(y)


def test_long_suffix_wraps_like_torch():
    arr = np.arange(8, dtype=np.float64) / 3
    a, b = tg.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
    assert repr(a[1:] * 2) == repr(b[1:] * 2)


@pytest.mark.parametrize("opts", [
    dict(precision=2), dict(precision=8), dict(threshold=5), dict(edgeitems=1, threshold=10),
    dict(linewidth=40), dict(sci_mode=True), dict(sci_mode=False), dict(profile="short"),
    dict(profile="full"), dict(edgeitems=0, threshold=3)])
def test_set_printoptions(opts):
    try:
        torch.set_printoptions(**opts)
        tg.set_printoptions(**opts)
        assert tg.get_printoptions() == torch._tensor_str.get_printoptions()
        for name in ("mixed", "tiny", "huge", "matrix", "long_ints", "summarised_2d", "3d"):
            _same(VALUES[name])
    finally:
        torch.set_printoptions(profile="default")
        tg.set_printoptions(profile="default")


def test_printoptions_context_restores():
    with tg.printoptions(precision=1):
        assert repr(tg.tensor([1.25, 2.5])) == "tensor([1.2, 2.5])"
    assert repr(tg.tensor([1.25, 2.5])) == "tensor([1.2500, 2.5000])"
    with pytest.raises(ValueError, match="profile"):
        tg.set_printoptions(profile="long")


def test_default_dtype_float64_changes_the_dtype_suffix():
    try:
        torch.set_default_dtype(torch.float64)
        tg.set_default_dtype(tg.float64)
        _same(np.array([1.5, 2.0], np.float32))
        _same(np.array([1.5, 2.0], np.float64))
        _same(np.zeros((0,), np.float64))
    finally:
        torch.set_default_dtype(torch.float32)
        tg.set_default_dtype(tg.float32)


# ---- formatting: f-strings and str.format on tensors -----------------------------------
@pytest.mark.parametrize("spec", ["", ".4f", ".2f", "10.3e", ">12", ".0%", "g"])
def test_format_of_0d_tensors_is_the_number(spec):
    for v in (2.34567, -0.001, 7.0):
        a, b = tg.tensor(v), torch.tensor(v)
        assert format(a, spec) == format(b, spec)
        assert f"{a}" == f"{b}"
    loss_t = (torch.tensor([1.5, 2.5], requires_grad=True) ** 2).mean()
    loss = (tg.tensor([1.5, 2.5], requires_grad=True) ** 2).mean()
    assert f"step 1: train loss {loss:.4f}" == f"step 1: train loss {loss_t:.4f}"
    assert "{:.2f}".format(loss) == "{:.2f}".format(loss_t)
    assert "%.3f" % loss == "%.3f" % loss_t.detach()
    assert format(tg.tensor(3), "d") == format(torch.tensor(3), "d")


def test_format_of_tensors_with_dims():
    a, b = tg.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])
    assert f"{a}" == f"{b}" == "tensor([1., 2.])"
    with pytest.raises(TypeError):
        format(b, ".2f")
    with pytest.raises(TypeError):
        format(a, ".2f")
    p, q = tg.nn.Parameter(tg.tensor(1.5)), torch.nn.Parameter(torch.tensor(1.5))
    assert f"{p}" == f"{q}"  # a Parameter is not a plain Tensor: formats as its str


# ---- grad_fn names ---------------------------------------------------------------------
def _graphs(lib, F):
    x = lib.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)
    y = lib.tensor(np.linspace(0.5, 2, 12).reshape(3, 4), requires_grad=True)
    v = lib.tensor(np.linspace(0.1, 1, 4), requires_grad=True)
    b3 = lib.tensor(np.linspace(-2, 2, 24).reshape(2, 3, 4), requires_grad=True)
    img = lib.tensor(np.linspace(-1, 1, 72).reshape(1, 2, 6, 6), requires_grad=True)
    idx = lib.tensor([[0], [1], [2]])
    return {
        "add": x + y, "add_scalar": x + 1, "sub": x - y, "rsub": 1 - x, "mul": x * y,
        "div": x / y, "rdiv": 1 / y, "pow": x ** 2, "pow_tensor": y ** x, "rpow": 2 ** x,
        "neg": -x, "abs": x.abs(), "exp": x.exp(), "log": y.log(), "sqrt": y.sqrt(),
        "tanh": x.tanh(), "sigmoid": x.sigmoid(), "relu": x.relu(), "clamp": x.clamp(0, 1),
        "sum": x.sum(), "sum_dim": x.sum(1), "mean": x.mean(), "mean_dim": x.mean(0),
        "prod": y.prod(1), "max": x.max(), "max_dim": x.max(1)[0], "min": x.min(),
        "amax_dim": x.amax(1), "var": x.var(1), "std": x.std(), "logsumexp": x.logsumexp(1),
        "softmax": x.softmax(1), "log_softmax": x.log_softmax(-1), "mm": x @ y.mT,
        "mv": x @ v, "dot": v @ v, "bmm": b3 @ b3.mT, "reshape": x.reshape(12),
        "view": x.view(2, 6), "flatten": b3.flatten(1), "expand": v.expand(3, 4),
        "permute": b3.permute(2, 0, 1), "transpose": x.transpose(0, 1),
        "unsqueeze": x.unsqueeze(0), "squeeze": x.unsqueeze(0).squeeze(0),
        "cat": lib.cat([x, y]), "stack": lib.stack([x, y]), "select": x[1],
        "slice": x[1:], "index": x[[0, 2]], "mask": x[x > 0], "none": x[None],
        "gather": x.gather(1, idx), "where": lib.where(x > 0, x, y), "cast": x.float(),
        "clone": x.clone(), "masked_fill": x.masked_fill(x > 0, 0.0),
        "linear": F.linear(x, y, v[:3]), "linear_3d": F.linear(b3, y, v[:3]),
        "conv2d": F.conv2d(img, lib.ones(3, 2, 3, 3, dtype=lib.float64)),
        "max_pool2d": F.max_pool2d(img, 2), "avg_pool2d": F.avg_pool2d(img, 2),
        "layer_norm": F.layer_norm(x, (4,)), "gelu": F.gelu(x),
        "cross_entropy": F.cross_entropy(x, lib.tensor([0, 1, 2])),
        "embedding": F.embedding(lib.tensor([0, 1]), x), "pad": F.pad(x, (1, 1)),
    }


def test_grad_fn_names_match_torch():
    ours = _graphs(tg, tg.nn.functional)
    theirs = _graphs(torch, torch.nn.functional)
    wrong = {k: (f"{ours[k].grad_fn and tg.names.node_name(ours[k].grad_fn)}",
                 theirs[k].grad_fn.name()) for k in ours
             if f"grad_fn=<{theirs[k].grad_fn.name()}>" not in repr(ours[k])}
    assert not wrong


def test_grad_fn_names_of_in_place_ops_and_custom_functions():
    x = tg.tensor([1.0, 2.0], requires_grad=True).clone()
    x[0] = 5.0
    assert repr(x).endswith("grad_fn=<CopySlices>)")

    class Double(tg.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    out = Double.apply(tg.tensor([1.0], requires_grad=True))
    assert repr(out) == "tensor([2.], grad_fn=<DoubleBackward>)"


def test_print_statements_of_training_loops(capsys):
    # makemore / nanoGPT style progress lines
    for lib in (torch, tg):
        loss = lib.tensor(2.3456789)
        lr = 0.1
        print(f"{10:7d}/{200000:7d}: {loss.item():.4f}")
        print(f"iter 10: loss {loss:.4f}, lr {lr:e}")
        print(loss)
        print(lib.tensor([[0.1, 0.25], [3.0, 4.0]]))
    out = capsys.readouterr().out.split("\n")
    half = len(out) // 2
    assert out[:half] == out[half:-1]


def test_forward_mode_duals_print_their_tangent():
    import torch.autograd.forward_ad as tfw
    fw = tg.autograd.forward_ad
    for primal, tangent in [([1.0, 2.0], [0.5, 1.0]), (1.0, 3.0)]:
        with fw.dual_level(), tfw.dual_level():
            a = fw.make_dual(tg.tensor(primal), tg.tensor(tangent))
            b = tfw.make_dual(torch.tensor(primal), torch.tensor(tangent))
            assert repr(a) == repr(b) and repr(a * 2) == repr(b * 2)


def test_repr_matches_torch_on_random_tensors():
    """Seeded random shapes, dtypes and magnitudes (a fuzz over the format choices)."""
    rng = np.random.default_rng(2026)
    for _ in range(300):
        nd = int(rng.integers(0, 4))
        shape = tuple(int(s) for s in rng.integers(1, 7, nd))
        kind = rng.choice(["f32", "f64", "f16", "int", "whole"])
        scale = 10.0 ** rng.integers(-7, 10)
        vals = rng.standard_normal(shape) * scale
        if kind == "int":
            arr = np.round(vals).astype(np.int64)
        elif kind == "whole":
            arr = np.round(vals).astype(np.float32)
        else:
            with np.errstate(over="ignore"):  # huge float16 values become inf: fine
                arr = vals.astype({"f32": np.float32, "f64": np.float64,
                                   "f16": np.float16}[kind])
        if arr.size > 2 and rng.random() < 0.3 and arr.dtype.kind == "f":
            arr.reshape(-1)[0] = rng.choice([np.nan, np.inf, -np.inf, 0.0])
        _same(np.asarray(arr))  # 0-d: an array, not a NumPy scalar
