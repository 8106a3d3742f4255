"""Per-op knowledge lives in the op's table entry (issue 11).

Every op of the derivative table carries the rule in a learner's notation (`text`, shown
by `tg.explain` and as the op's tooltip in `tg.viz.to_dot`), what anomaly mode says when
its rule gives nan/inf (`hint`), and whether strict mode checks it (`strict`). The first
test fails when an op lacks any of them; the others show that explain, to_dot, anomaly
mode and strict mode take that knowledge from the entry and from nowhere else.
"""
import importlib
import pkgutil
import warnings

import numpy as np
import pytest

import tapegrad as tg
from tapegrad.autograd.strict import StrictModeError, reset_strict_cache
from tapegrad.core.record import apply
from tapegrad.ops.registry import OPS, Op, defop

# the module (the name tg.autograd.strict is its context manager)
strict_mode = importlib.import_module("tapegrad.autograd.strict")


def _import_every_module():
    """Import every tapegrad module, so that every `defop` has run (the conv and
    attention tables are imported lazily by their nn modules)."""
    failed = []
    for m in pkgutil.walk_packages(tg.__path__, "tapegrad."):
        if m.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(m.name)
        except (Exception, SystemExit) as e:  # noqa: BLE001 (named in the assertion)
            failed.append((m.name, repr(e)))
    return failed


def test_every_table_op_has_text_hint_and_a_valid_strict():
    failed = _import_every_module()
    assert not failed, f"modules that do not import: {failed}"
    # the lazily imported tables really are in: the check below covers them
    for name in ("conv2d", "max_pool2d", "unfold", "scaled_dot_product_attention",
                 "embedding", "getitem", "matmul", "softmax"):
        assert name in OPS, f"{name} is not in the table after importing every module"
    problems = []
    for name, op in sorted(OPS.items()):
        for field in ("text", "hint"):
            value = getattr(op, field)
            if not (isinstance(value, str) and value.strip()):
                problems.append(f"{name}: {field} is {value!r}")
        if not (op.strict is None or callable(op.strict) or isinstance(op.strict, str)):
            problems.append(f"{name}: strict is {op.strict!r} (None, a predicate on "
                            "node.args, or a reason string)")
        if isinstance(op.strict, str) and not op.strict.strip():
            problems.append(f"{name}: strict is an empty reason")
    assert not problems, ("table ops without their knowledge (add text=/hint= to the "
                          "defop call):\n  " + "\n  ".join(problems))


def test_the_texts_that_existed_are_kept():
    # the narrated backward of the lessons shows these exact strings
    assert OPS["mul"].text == "dx = g*y ; dy = g*x"
    assert OPS["add"].text == "dx = g ; dy = g"
    assert OPS["tanh"].text == "dx = g*(1-ans**2)"
    assert OPS["matmul"].text == "dX = g @ W^T ; dW = X^T @ g"
    assert OPS["sum"].text == "dx = g broadcast back over the summed axes"
    assert OPS["sqrt"].hint.startswith("sqrt'(x) = 1/(2*sqrt(x)) is infinite at x = 0")


def test_op_rejects_a_strict_that_is_neither_none_callable_nor_str():
    with pytest.raises(TypeError, match=r"op 'bad_strict': strict must be None.*got int 3"):
        Op("bad_strict", np.negative, strict=3)


@pytest.fixture
def table_op():
    """defop for the test, taken out of the table again afterwards."""
    made = []

    def make(name, *a, **kw):
        made.append(name)
        return defop(name, *a, **kw)
    yield make
    for name in made:
        OPS.pop(name, None)


def _reciprocal_op(table_op, **knowledge):
    return table_op("_test_knowledge_recip", lambda x: 1.0 / x,
                    partials=[lambda xp, ans, x: -ans * ans], reads=["ans"], **knowledge)


def test_anomaly_note_is_the_entry_hint(table_op):
    op = _reciprocal_op(table_op, text="dx = -g*ans**2",
                        hint="recip'(x) = -1/x**2 is infinite at x = 0; try recip(x + eps)")
    x = tg.tensor([0.0, 2.0], requires_grad=True)
    with warnings.catch_warnings(), np.errstate(divide="ignore"):
        warnings.simplefilter("ignore", UserWarning)  # "Anomaly Detection has been enabled"
        with tg.autograd.detect_anomaly():
            y = apply(op, x)
            with pytest.raises(RuntimeError) as e:
                y.sum().backward()
    msg = str(e.value)
    assert msg.startswith("Function '_test_knowledge_recip' returned inf values")
    assert ("  Note: recip'(x) = -1/x**2 is infinite at x = 0; try recip(x + eps)."
            in msg.splitlines())


def test_anomaly_note_of_a_real_op_comes_from_its_entry(monkeypatch):
    # nan-only check (PyTorch's): sqrt(x*x) at 0 blames mul, whose rule met inf * 0
    x = tg.tensor(0.0, requires_grad=True)
    monkeypatch.setattr(OPS["mul"], "hint", "a hint set on the mul entry")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with tg.autograd.detect_anomaly(check_inf=False):
            y = tg.sqrt(x * x)
            with pytest.raises(RuntimeError) as e:
                y.backward()
    assert str(e.value).startswith("Function 'mul' returned nan values")
    assert "  Note: a hint set on the mul entry." in str(e.value).splitlines()


def test_explain_and_to_dot_show_the_entry_text(table_op):
    op = _reciprocal_op(table_op, text="dx = -g*ans**2 (entry text)", hint="h")
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    y = apply(op, x)
    dot = tg.viz.to_dot(y.sum())
    assert 'tooltip="dx = -g*ans**2 (entry text)"' in dot
    assert 'tooltip="dx = g broadcast back over the summed axes"' in dot  # sum's entry
    rows = tg.explain(y.sum(), quiet=True)
    row = next(r for r in rows if "_test_knowledge_recip" in r)
    assert "dx = -g*ans**2 (entry text)" in row
    np.testing.assert_allclose(x.grad.data, [-1.0, -0.25])  # explain ran the real backward


def test_explain_row_of_a_real_op_is_its_entry_text():
    x = tg.tensor([[1.0, 2.0]], requires_grad=True)
    w = tg.tensor([[3.0], [4.0]], requires_grad=True)
    rows = tg.explain((x @ w).tanh().sum(), quiet=True)
    for name in ("sum", "tanh", "matmul"):
        row = next(r for r in rows if r.split()[1] == name)
        assert OPS[name].text in row, (name, row)


def _wrong_double(table_op, strict):
    # a rule that is 3x instead of the derivative 2x: strict mode flags it unless exempted
    return table_op("_test_knowledge_wrong", lambda x, flag=False: 2.0 * x,
                    vjp=[lambda xp, g, ans, x, flag=False: 3.0 * g], reads=[""],
                    text="dx = 3*g (deliberately wrong)", hint="finite", strict=strict)


def _backward_strict(op, **args):
    reset_strict_cache()
    x = tg.tensor([1.0, 2.0], dtype=tg.float64, requires_grad=True)
    with tg.autograd.strict():
        apply(op, x, **args).sum().backward()
    return x.grad.data


def test_strict_predicate_in_the_entry_exempts_only_where_true(table_op):
    op = _wrong_double(table_op, strict=lambda args: args.get("flag", False))
    np.testing.assert_array_equal(_backward_strict(op, flag=True), [3.0, 3.0])  # exempt
    with pytest.raises(StrictModeError, match="_test_knowledge_wrong"):
        _backward_strict(op, flag=False)
    assert op.strict_exempt({"flag": False}) is None
    assert op.strict_exempt({"flag": True})


def test_strict_reason_string_in_the_entry_exempts_always(table_op):
    op = _wrong_double(table_op, strict="its forward cannot be re-run (test)")
    np.testing.assert_array_equal(_backward_strict(op, flag=False), [3.0, 3.0])
    assert op.strict_exempt({}) == "its forward cannot be re-run (test)"


def test_strict_checks_the_wrong_rule_when_the_entry_has_no_exemption(table_op):
    op = _wrong_double(table_op, strict=None)
    with pytest.raises(StrictModeError, match="disagrees with finite differences"):
        _backward_strict(op, flag=True)


def test_embedding_is_exempt_only_with_a_padding_idx():
    w = tg.randn(5, 3, requires_grad=True)
    idx = tg.tensor([[0, 2], [2, 4]])
    plain = tg.nn.functional.embedding(idx, w)
    padded = tg.nn.functional.embedding(idx, w, padding_idx=2)
    op = plain.grad_fn.op
    assert op is OPS["embedding"] and padded.grad_fn.op is op
    assert op.strict_exempt(plain.grad_fn.args) is None  # strict mode checks it
    assert op.strict_exempt(padded.grad_fn.args)  # the padding row gets no gradient


def test_custom_function_and_checkpoint_ops_carry_their_knowledge():
    class Cube(tg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    x = tg.tensor([1.0, 2.0], requires_grad=True)
    op = Cube.apply(x).grad_fn.op
    assert "Cube.backward" in op.text and "Cube.backward" in op.hint
    assert op.strict is None  # strict mode re-runs the Function's forward/backward
    y = tg.utils.checkpoint.checkpoint(lambda t: (t * t).sum(), x, use_reentrant=False)
    cop = y.grad_fn.op
    assert cop.name == "checkpoint"
    assert cop.text and cop.hint and isinstance(cop.strict, str) and cop.strict


def _torch_and_tg(fn_tg, fn_torch):
    """The same write with a position named twice, in both libraries: (ours, torch's)
    gradients of the written values, ours computed under strict mode."""
    import torch
    g = np.array([1.0, 2.0, 3.0, 4.0])
    v = tg.tensor([1.0, 2.0, 3.0], dtype=tg.float64, requires_grad=True)
    reset_strict_cache()
    with tg.autograd.strict():
        (fn_tg(tg.zeros(4, dtype=tg.float64), v) * tg.tensor(g)).sum().backward()
    tv = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    (fn_torch(torch.zeros(4, dtype=torch.float64), tv) * torch.tensor(g)).sum().backward()
    return v.grad.data, tv.grad.numpy()


def test_scatter_with_a_repeated_index_is_exempt_and_matches_torch():
    import torch
    idx = [0, 0, 2]
    ours, theirs = _torch_and_tg(lambda x, v: x.scatter(0, tg.tensor(idx), v),
                                 lambda x, v: x.scatter(0, torch.tensor(idx), v))
    np.testing.assert_array_equal(ours, theirs)  # [1, 1, 3]: each src gets g at its target
    op = OPS["scatter"]
    assert op.strict_exempt({"index": np.array(idx), "axis": 0})
    assert op.strict_exempt({"index": np.array([[0, 1], [1, 1]]), "axis": 1})
    assert op.strict_exempt({"index": np.array([[0, 1], [1, 0]]), "axis": 1}) is None
    assert op.strict_exempt({"index": np.array([[0, 1], [1, 0]]), "axis": 0}) is None


def test_setitem_with_a_repeated_index_is_exempt_and_matches_torch():
    import torch

    def put(x, v, idx):
        y = x.clone()
        y[idx] = v
        return y
    ours, theirs = _torch_and_tg(lambda x, v: put(x, v, tg.tensor([0, 0, 2])),
                                 lambda x, v: put(x, v, torch.tensor([0, 0, 2])))
    np.testing.assert_array_equal(ours, theirs)
    op = OPS["setitem"]
    assert op.strict_exempt({"key": np.array([3, 3]), "accumulate": False})
    assert op.strict_exempt({"key": (slice(None), np.array([-1, 2])), "accumulate": False})
    assert op.strict_exempt({"key": np.array([3, 3]), "accumulate": True}) is None
    assert op.strict_exempt({"key": (np.array([0, 0]), np.array([1, 2])),
                             "accumulate": False}) is None  # (0, 1) and (0, 2)
    assert op.strict_exempt({"key": (slice(1, 3), 0), "accumulate": False}) is None


def test_strict_still_checks_scatter_without_repeats():
    # the exemption is narrow: a distinct-index write goes through the finite-difference
    # check (it passes: the rule is the derivative there)
    v = tg.tensor([1.0, 2.0], dtype=tg.float64, requires_grad=True)
    reset_strict_cache()
    with tg.autograd.strict():
        y = tg.zeros(4, dtype=tg.float64).scatter(0, tg.tensor([3, 1]), v)
        assert OPS["scatter"].strict_exempt(y.grad_fn.args) is None
        (y * tg.tensor([1.0, 2.0, 3.0, 4.0])).sum().backward()
    np.testing.assert_array_equal(v.grad.data, [4.0, 2.0])
    assert any(key[0] == "scatter" for key in strict_mode._checked)  # it was checked
