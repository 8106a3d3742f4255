"""Type promotion against PyTorch: a table of every dtype pair and operand kind.

For every pair of operands drawn from tapegrad's dtypes as a dimensioned tensor, a 0-d
tensor, or a Python bool/int/float, and for every binary op (the operators, the
functions, the in-place forms, where, maximum/minimum, comparisons), the result dtype
must equal torch's (computed here at run time from torch itself), and an operation
torch refuses must be refused. Reductions' dtypes (sum/prod/cumsum of integers are
int64, mean of an integer tensor raises) and the constructors' dtype inference are
checked against torch in the same way.

`python tests/test_type_promotion.py` prints how many combinations differ.
"""
import operator
import os
import sys

import numpy as np
import pytest

import tapegrad as tg

try:
    import torch
except ImportError:  # pragma: no cover - the suite requires torch in CI
    if os.environ.get("TAPEGRAD_REQUIRE_TORCH"):
        raise
    pytest.skip("torch is not installed", allow_module_level=True)

# tapegrad's dtypes (bfloat16 exists only as a name: NumPy has no bfloat16; no complex)
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
          "float64"]
PY_NUMBERS = [True, 2, 2.5]


def _operands():
    """(label, make_torch, make_tapegrad): every operand kind of every dtype."""
    out = []
    for name in DTYPES:
        v = [True, True] if name == "bool" else [3, 2]
        s = True if name == "bool" else 2
        out.append((f"{name}[2]", lambda v=v, n=name: torch.tensor(v, dtype=getattr(torch, n)),
                    lambda v=v, n=name: tg.tensor(v, dtype=getattr(tg, n))))
        out.append((f"{name}[]", lambda s=s, n=name: torch.tensor(s, dtype=getattr(torch, n)),
                    lambda s=s, n=name: tg.tensor(s, dtype=getattr(tg, n))))
    for p in PY_NUMBERS:
        out.append((repr(p), lambda p=p: p, lambda p=p: p))
    return out


OPERANDS = _operands()

OPERATORS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
             "//": operator.floordiv, "%": operator.mod, "**": operator.pow,
             "&": operator.and_, "|": operator.or_, "^": operator.xor,
             "==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
             ">": operator.gt, ">=": operator.ge}
INPLACE = {"+=": operator.iadd, "-=": operator.isub, "*=": operator.imul,
           "/=": operator.itruediv, "//=": operator.ifloordiv, "%=": operator.imod,
           "**=": operator.ipow, "&=": operator.iand, "|=": operator.ior,
           "^=": operator.ixor}
FUNCTIONS = ["add", "sub", "mul", "div", "floor_divide", "remainder", "fmod", "pow",
             "maximum", "minimum", "eq", "lt", "ge", "bitwise_and", "bitwise_xor"]


def _dn(dtype):
    """A dtype's bare name: `torch.float32` and `tapegrad.float32` are both `float32`."""
    return str(dtype).replace("torch.", "").replace("tapegrad.", "")


def _outcome(fn):
    """The result's dtype name, or 'raises' (any exception: torch's refusals are
    RuntimeError and TypeError)."""
    try:
        r = fn()
    except Exception:  # noqa: BLE001 - only whether it raises is compared
        return "raises"
    return _dn(r.dtype)


def _cases():
    """(case label, torch thunk, tapegrad thunk) for every binary combination."""
    for la, ta, ga in OPERANDS:
        for lb, tb, gb in OPERANDS:
            a_num, b_num = la in map(repr, PY_NUMBERS), lb in map(repr, PY_NUMBERS)
            if a_num and b_num:
                continue
            for sym, op in OPERATORS.items():
                yield (f"{la} {sym} {lb}", lambda op=op, ta=ta, tb=tb: op(ta(), tb()),
                       lambda op=op, ga=ga, gb=gb: op(ga(), gb()))
            if a_num:
                continue
            for sym, op in INPLACE.items():
                yield (f"{la} {sym} {lb}", lambda op=op, ta=ta, tb=tb: op(ta(), tb()),
                       lambda op=op, ga=ga, gb=gb: op(ga(), gb()))
            for name in FUNCTIONS:
                yield (f"{name}({la}, {lb})",
                       lambda n=name, ta=ta, tb=tb: getattr(torch, n)(ta(), tb()),
                       lambda n=name, ga=ga, gb=gb: getattr(tg, n)(ga(), gb()))
            yield (f"where(c, {la}, {lb})",
                   lambda ta=ta, tb=tb: torch.where(torch.tensor([True, False]), ta(), tb()),
                   lambda ga=ga, gb=gb: tg.where(tg.tensor([True, False]), ga(), gb()))
            yield (f"result_type({la}, {lb})",
                       lambda ta=ta, tb=tb: torch.empty(0, dtype=torch.result_type(ta(), tb())),
                       lambda ga=ga, gb=gb: tg.empty(0, dtype=tg.result_type(ga(), gb())))


REDUCTIONS = {"sum": lambda t: t.sum(), "sum(0)": lambda t: t.sum(0),
              "prod": lambda t: t.prod(), "mean": lambda t: t.mean(),
              "mean(0)": lambda t: t.mean(0), "cumsum": lambda t: t.cumsum(0),
              "max": lambda t: t.max(), "amax": lambda t: t.amax(0),
              "argmax": lambda t: t.argmax(), "argmin(0)": lambda t: t.argmin(0),
              "std": lambda t: t.std(), "var(0)": lambda t: t.var(0),
              "prod(0)": lambda t: t.prod(0), "~": lambda t: ~t,
              "bitwise_not": lambda t: t.bitwise_not(), "neg": lambda t: -t,
              "exp": lambda t: t.exp(), "abs": lambda t: t.abs(),
              "sum(dtype=f64)": None}


def _reduction_cases():
    for name in DTYPES:
        v = [True, False] if name == "bool" else [3, 2]
        for rname, f in REDUCTIONS.items():
            if f is None:
                yield (f"{name}.sum(dtype=float64)",
                       lambda v=v, n=name: torch.tensor(v, dtype=getattr(torch, n)).sum(
                           dtype=torch.float64),
                       lambda v=v, n=name: tg.tensor(v, dtype=getattr(tg, n)).sum(
                           dtype=tg.float64))
                continue
            yield (f"{name}.{rname}",
                   lambda v=v, n=name, f=f: f(torch.tensor(v, dtype=getattr(torch, n))),
                   lambda v=v, n=name, f=f: f(tg.tensor(v, dtype=getattr(tg, n))))


def mismatches(cases):
    bad = []
    for label, t, g in cases:
        want, got = _outcome(t), _outcome(g)
        if want != got:
            bad.append(f"{label}: torch {want}, tapegrad {got}")
    return bad


BINARY = list(_cases())


def test_binary_promotion_table_matches_torch():
    assert len(BINARY) > 10000  # the table really enumerates every combination
    bad = mismatches(BINARY)
    assert not bad, f"{len(bad)} of {len(BINARY)} differ from torch:\n" + "\n".join(bad[:60])


def test_unary_and_reduction_dtypes_match_torch():
    cases = list(_reduction_cases())
    bad = mismatches(cases)
    assert not bad, f"{len(bad)} of {len(cases)} differ from torch:\n" + "\n".join(bad)


def test_promotion_computes_in_the_result_dtype():
    # torch casts the 0-d float64 operand to float32 before comparing (NumPy would not)
    t = torch.tensor([0.1], dtype=torch.float32) == torch.tensor(0.1, dtype=torch.float64)
    g = tg.tensor([0.1], dtype=tg.float32) == tg.tensor(0.1, dtype=tg.float64)
    assert g.tolist() == t.tolist() == [True]
    big = 16777217  # not a float32: int tensor + Python float is computed in float32
    assert (tg.tensor([big]) + 0.5).tolist() == (torch.tensor([big]) + 0.5).tolist()
    assert (tg.tensor([big]) / 1).tolist() == (torch.tensor([big]) / 1).tolist()


def test_gradients_keep_each_inputs_dtype():
    x = torch.tensor([1.5, 2.0], requires_grad=True)
    s = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    (x * s).sum().backward()
    gx = tg.tensor([1.5, 2.0], requires_grad=True)
    gs = tg.tensor(3.0, dtype=tg.float64, requires_grad=True)
    y = gx * gs
    assert _dn(y.dtype) == "float32"
    y.sum().backward()
    assert _dn(gx.grad.dtype) == _dn(x.grad.dtype)
    assert _dn(gs.grad.dtype) == _dn(s.grad.dtype)
    np.testing.assert_allclose(gs.grad.numpy(), s.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gx.grad.numpy(), x.grad.numpy(), rtol=1e-6)


def test_inplace_cast_error_message_is_torchs():
    with pytest.raises(RuntimeError) as te:
        t = torch.tensor([1, 2])
        t += 1.5
    with pytest.raises(RuntimeError) as ge:
        g = tg.tensor([1, 2])
        g += 1.5
    assert str(ge.value) == str(te.value)
    assert str(te.value) == "result type Float can't be cast to the desired output type Long"


def test_mean_of_integers_raises_like_torch():
    with pytest.raises(RuntimeError) as te:
        torch.tensor([1, 2]).mean()
    with pytest.raises(RuntimeError) as ge:
        tg.tensor([1, 2]).mean()
    assert str(ge.value) == str(te.value)


def test_promote_types_and_can_cast_match_torch():
    for a in DTYPES:
        for b in DTYPES:
            ta, tb = getattr(torch, a), getattr(torch, b)
            ga, gb = getattr(tg, a), getattr(tg, b)
            assert str(tg.promote_types(ga, gb)) == str(torch.promote_types(ta, tb)).replace(
                "torch.", ""), (a, b)
            assert tg.can_cast(ga, gb) == torch.can_cast(ta, tb), (a, b)


def test_default_dtype_is_respected_by_promotion():
    old = torch.get_default_dtype()
    try:
        for d in ("float64", "float16"):
            torch.set_default_dtype(getattr(torch, d))
            tg.set_default_dtype(getattr(tg, d))
            cases = [(f"int + 2.5 [{d}]", lambda: torch.tensor([1]) + 2.5,
                      lambda: tg.tensor([1]) + 2.5),
                     (f"int / int [{d}]", lambda: torch.tensor([1]) / torch.tensor([2]),
                      lambda: tg.tensor([1]) / tg.tensor([2])),
                     (f"f32 * 2.5 [{d}]", lambda: torch.tensor([1.0], dtype=torch.float32) * 2.5,
                      lambda: tg.tensor([1.0], dtype=tg.float32) * 2.5),
                     (f"result_type(int, 2.5) [{d}]",
                      lambda: torch.empty(0, dtype=torch.result_type(torch.tensor([1]), 2.5)),
                      lambda: tg.empty(0, dtype=tg.result_type(tg.tensor([1]), 2.5)))]
            assert not mismatches(cases), mismatches(cases)
    finally:
        torch.set_default_dtype(old)
        tg.set_default_dtype(tg.float32)


# ---- constructors -----------------------------------------------------------------
def _ctor_cases():
    f64 = np.array([1.5, 2.5])
    return [
        ("tensor(np.float64(1.5))", lambda: torch.tensor(np.float64(1.5)),
         lambda: tg.tensor(np.float64(1.5))),
        ("tensor(np.float32(1.5))", lambda: torch.tensor(np.float32(1.5)),
         lambda: tg.tensor(np.float32(1.5))),
        ("tensor(np.int32(3))", lambda: torch.tensor(np.int32(3)),
         lambda: tg.tensor(np.int32(3))),
        ("tensor(np.float16(1))", lambda: torch.tensor(np.float16(1)),
         lambda: tg.tensor(np.float16(1))),
        ("tensor(np.bool_(True))", lambda: torch.tensor(np.bool_(True)),
         lambda: tg.tensor(np.bool_(True))),
        ("tensor(1.5)", lambda: torch.tensor(1.5), lambda: tg.tensor(1.5)),
        ("tensor([1.5, 2])", lambda: torch.tensor([1.5, 2]), lambda: tg.tensor([1.5, 2])),
        ("tensor([1, 2])", lambda: torch.tensor([1, 2]), lambda: tg.tensor([1, 2])),
        ("tensor([True])", lambda: torch.tensor([True]), lambda: tg.tensor([True])),
        ("tensor([1, 2.5, True])", lambda: torch.tensor([1, 2.5, True]),
         lambda: tg.tensor([1, 2.5, True])),
        ("tensor(f64 array)", lambda: torch.tensor(f64), lambda: tg.tensor(f64)),
        ("tensor(int32 array)", lambda: torch.tensor(f64.astype(np.int32)),
         lambda: tg.tensor(f64.astype(np.int32))),
        ("tensor([np.float64(1)])", lambda: torch.tensor([np.float64(1.0)]),
         lambda: tg.tensor([np.float64(1.0)])),
        ("tensor(f64 array, dtype=f16)", lambda: torch.tensor(f64, dtype=torch.float16),
         lambda: tg.tensor(f64, dtype=tg.float16)),
        ("Tensor(f64 array)", lambda: torch.Tensor(f64), lambda: tg.Tensor(f64)),
        ("Tensor(int64 array)", lambda: torch.Tensor(f64.astype(np.int64)),
         lambda: tg.Tensor(f64.astype(np.int64))),
        ("Tensor([1, 2])", lambda: torch.Tensor([1, 2]), lambda: tg.Tensor([1, 2])),
        ("Tensor(2, 3)", lambda: torch.Tensor(2, 3), lambda: tg.Tensor(2, 3)),
        ("as_tensor(f64 array)", lambda: torch.as_tensor(f64), lambda: tg.as_tensor(f64)),
        ("from_numpy(f64 array)", lambda: torch.from_numpy(f64), lambda: tg.from_numpy(f64)),
        ("as_tensor([1.5])", lambda: torch.as_tensor([1.5]), lambda: tg.as_tensor([1.5])),
        ("zeros(2)", lambda: torch.zeros(2), lambda: tg.zeros(2)),
        ("arange(3)", lambda: torch.arange(3), lambda: tg.arange(3)),
        ("arange(3.0)", lambda: torch.arange(3.0), lambda: tg.arange(3.0)),
        ("full((2,), 7)", lambda: torch.full((2,), 7), lambda: tg.full((2,), 7)),
        ("full((2,), 7.0)", lambda: torch.full((2,), 7.0), lambda: tg.full((2,), 7.0)),
        ("full((2,), True)", lambda: torch.full((2,), True), lambda: tg.full((2,), True)),
    ]


def test_legacy_constructor_shares_an_array_of_the_default_dtype_like_torch():
    for lib in (torch, tg):
        a = np.ones(2, np.float32)
        t = lib.Tensor(a)
        a[0] = 5
        b = np.ones(2)
        u = lib.Tensor(b)
        b[0] = 5
        assert t.tolist() == [5.0, 1.0] and u.tolist() == [1.0, 1.0], lib


def test_python_ints_wrap_like_torch_scalars():
    t = torch.tensor([1, 250], dtype=torch.uint8)
    g = tg.tensor([1, 250], dtype=tg.uint8)
    for f in (lambda x: x + 300, lambda x: x * 300, lambda x: x - 300):
        want, got = f(t), f(g)
        assert _dn(got.dtype) == "uint8" and got.tolist() == want.tolist()


def test_constructor_dtypes_match_torch():
    bad = mismatches(_ctor_cases())
    assert not bad, "\n".join(bad)


def test_constructors_follow_the_default_dtype():
    old = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        tg.set_default_dtype(tg.float64)
        bad = mismatches(_ctor_cases())
    finally:
        torch.set_default_dtype(old)
        tg.set_default_dtype(tg.float32)
    assert not bad, "\n".join(bad)


if __name__ == "__main__":
    groups = {"binary": BINARY, "unary and reductions": list(_reduction_cases()),
              "constructors": _ctor_cases()}
    for gname, cases in groups.items():
        bad = mismatches(cases)
        print(f"{gname}: {len(bad)} of {len(cases)} combinations differ from torch")
        if "-v" in sys.argv:
            print("\n".join("  " + b for b in bad))


def test_library_code_keeps_array_dtypes_with_tensor_of():
    """`Tensor(ndarray)` converts to the default dtype (torch's legacy constructor); the
    library's own code must build tensors of arrays with `Tensor._of`, which keeps the
    dtype (an int64 index array silently becoming float32 is the bug this prevents)."""
    import io
    import pathlib
    import tokenize
    root = pathlib.Path(tg.__file__).parent
    allowed = {"_tensor.py", "legacy.py"}  # the constructor itself and the legacy types
    calls = []
    for p in root.rglob("*.py"):
        if p.name in allowed:
            continue
        toks = list(tokenize.generate_tokens(io.StringIO(p.read_text()).readline))
        for i, t in enumerate(toks[1:-2], 1):
            if (t.type == tokenize.NAME and t.string == "Tensor" and toks[i + 1].string == "("
                    and toks[i + 2].string != ")" and toks[i - 1].string not in ("class", "def")
                    and not (toks[i - 1].string == "." and toks[i - 2].string == "torch")):
                calls.append(f"{p.relative_to(root)}:{t.start[0]}")
    assert not calls, calls


def _makemore_bigram(lib):
    """makemore part 1's counting model and PyTorch's tutorial accuracy line, verbatim
    but for the library: int32 counts, in-place int += 1, float conversions, a Python
    float accumulating 0-d tensors, an int mask summed."""
    words = ["emma", "olivia", "ava", "isabella", "sophia"]
    chars = sorted(set("".join(words)))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    V = len(stoi)
    N = lib.zeros((V, V), dtype=lib.int32)
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            N[stoi[ch1], stoi[ch2]] += 1
    P = (N + 1).float()
    P /= P.sum(1, keepdims=True)
    log_likelihood = 0.0
    n = 0
    for w in words:
        chs = ["."] + list(w) + ["."]
        for ch1, ch2 in zip(chs, chs[1:]):
            log_likelihood += lib.log(P[stoi[ch1], stoi[ch2]])
            n += 1
    nll = -log_likelihood
    pred, y = N.argmax(1), lib.arange(V) % 3
    correct = (pred == y).type(lib.float).sum().item()
    return N, P, nll / n, correct / V, N.sum() / 2, (N > 0).sum()


def test_real_program_dtypes_and_values_match_torch():
    want, got = _makemore_bigram(torch), _makemore_bigram(tg)
    for w, g in zip(want, got):
        if isinstance(w, torch.Tensor):
            assert _dn(g.dtype) == _dn(w.dtype)
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-6)
        else:
            assert g == pytest.approx(w)
