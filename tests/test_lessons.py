"""The lessons (docs/lessons/*.md) and their scripts (examples/lesson_*.py).

1. Every lesson page quotes its script's output (that the quote equals the real output
   is checked by the doc tests: conftest.py, `python -m pytest docs -q`).
2. The numbers the scripts compute are checked against PyTorch, exact arithmetic and the
   numbers the pages state, independently of our own output.
"""
import contextlib
import importlib.util
import io
import math
import re
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
LESSONS = ROOT / "docs" / "lessons"
BLOCK = re.compile(r"```text\n\$ python (examples/\S+\.py)\n(.*?)```", re.S)
_cache = {}


def run_lesson(rel):
    """Import examples/<script> and run main(); return (stdout, results). Cached."""
    if rel not in _cache:
        path = ROOT / rel
        spec = importlib.util.spec_from_file_location(f"_lesson_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            res = mod.main()
        _cache[rel] = (buf.getvalue(), res, mod)
    return _cache[rel]


PAGES = sorted(LESSONS.glob("[0-9]*.md"))


def test_every_lesson_has_an_output_block():
    assert [p.name[:2] for p in PAGES] == [f"{i:02d}" for i in range(1, len(PAGES) + 1)]
    assert len(PAGES) >= 11
    for p in PAGES:
        assert BLOCK.search(p.read_text()), f"{p.name} quotes no script output"


def _torch_grad(fn, x0):
    x = torch.tensor(x0, dtype=torch.float64, requires_grad=True)
    y = fn(x)
    y.backward()
    return y.item(), x.grad.item()


def test_lesson_01_reuse():
    out, r, _ = run_lesson("examples/lesson_01_reuse.py")
    assert (r["u"], r["y"], r["dydx"], r["tensor_grad"]) == (9.0, 18.0, 12.0, 12.0)
    assert _torch_grad(lambda x: 2 * x ** 2, 3.0) == (18.0, 12.0)
    assert r["n_tanh"] == 1 and r["fd_ok"]
    assert "chain rule:  dy/dx = dy/du * du/dx = 12.0" in out
    assert "local derivatives:  dy/du = 2.0   du/dx = 2*x = 6.0" in out


def test_lesson_02_value():
    out, r, _ = run_lesson("examples/lesson_02_value.py")
    assert r["grads"] == {"loss": 1.0, "u": 1.0, "b": 1.0, "w": 2.0, "x": 0.5}
    assert r["order"][:2] == ["loss", "u"] and set(r["order"][2:]) == {"b", "w", "x"}
    assert "w.grad += x.data * u.grad = 2.0 * 1.0 -> 2.0" in r["trace"]
    assert len(r["trace"]) == 4  # one line per local rule: 2 for +, 2 for *
    tw, tx, tb = (torch.tensor(v, dtype=torch.float64, requires_grad=True)
                  for v in (0.5, 2.0, -1.0))
    (tw * tx + tb).backward()
    assert r["tensor_grads"] == (tw.grad.item(), tx.grad.item(), tb.grad.item())
    assert r["grads"]["w"] == tw.grad.item() and r["grads"]["x"] == tx.grad.item()
    node_rows = [line for line in r["table"][1:] if not line.split()[0] == "leaf"]
    assert [row.split()[1] for row in node_rows] == ["sum", "add", "mul"]
    assert all("lesson_02_value.py:" in row for row in node_rows)
    for label in ("loss", "u", "w", "x", "b"):
        assert f'label="{{ {label} | data ' in r["dot"]   # draw_dot's record


def test_lesson_03_logistic_map():
    out, r, mod = run_lesson("examples/lesson_03_logistic_map.py")
    assert f"{r['grad']:.10f}" == "-65.1931590859"
    assert f"{r['forward']:.10f}" == "-65.1931590859"
    # exact derivative independently: d/dx of 4x(1-x) is 4 - 8x, chained
    x, d = Fraction(3, 10), Fraction(1)
    for _ in range(6):
        d, x = d * (4 - 8 * x), 4 * x * (1 - x)
    assert r["exact"] == d
    assert r["err"] < 1e-13
    tx = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    y = tx
    for _ in range(6):
        y = 4 * y * (1 - y)
    y.backward()
    assert abs(r["grad"] - tx.grad.item()) < 1e-12
    assert abs(r["tensor_grad"] - tx.grad.item()) < 1e-12
    # the Tensor tape: the page's 18 entries; tg.Value: micrograd's graph, where 4*x is
    # x*Value(4) and 1-x is (x*Value(-1)) + Value(1): 4 ops per iteration, and 3 of them
    # '*' with two children each: 6 multiplications per iteration in its backward
    assert r["n_nodes"] == 18
    assert r["n_ops"] == 4 * 6 and r["mults"] == 6 * 6
    assert r["degree"] == 64          # f' has degree 63
    stated = {1e-6: 1.8e-3, 1e-8: 1.8e-5, 1e-10: 6.8e-6, 1e-12: 4.7e-3, 1e-14: 0.049}
    for h, e in stated.items():
        assert abs(r["fd_errors"][h] - e) <= 0.05 * e, (h, r["fd_errors"][h])
    assert r["n_big"] == 4 * 100_000
    assert len(str(max(map(abs, mod.poly_coeffs())))) == 48


def _torch_logistic_grad(k):
    tx = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    y = tx
    for _ in range(k):
        y = 4 * y * (1 - y)
    y.backward()
    return tx.grad.item()


def test_lesson_03_central_differences_and_the_exploding_derivative():
    """The corrections of lesson 3: central differences reach ~10 digits where one-sided
    ones stop at ~7; f' grows like 2^k, overflows at k = 1024 (torch too), and the
    k = 100000 backward 'finishes' with x.grad = nan."""
    _, r, _ = run_lesson("examples/lesson_03_logistic_map.py")
    exact = abs(float(r["exact"]))
    best_one_sided = min(r["fd_errors"].values()) / exact
    best_central = min(r["central_errors"].values()) / exact
    assert 1e-8 < best_one_sided < 1e-7 and 1e-10 < best_central < 1e-9
    for k, g in r["growth"].items():
        assert g == pytest.approx(_torch_logistic_grad(k), rel=1e-9), k
    assert abs(r["growth"][50] + 2.16e14) < 0.01e14            # the issue's -2.2e14
    assert all(0.85 < math.log2(abs(g)) / k < 1.05 for k, g in r["growth"].items())
    k = r["overflow_k"]
    assert k == 1024
    assert math.isfinite(_torch_logistic_grad(k - 1)) and math.isnan(_torch_logistic_grad(k))
    assert "-inf" in r["overflow_lines"][0] and r["overflow_lines"][-1].endswith("-> nan")
    assert math.isnan(r["big_grad"])


def test_lesson_03_forward_values_lose_every_digit_by_k_55():
    """The page: at k = 50 only the first digit of the float64 f(0.3) is right, at 55 none."""
    from decimal import Decimal, getcontext
    getcontext().prec = 200          # 2^60 * 1e-200: exact to far more digits than shown

    def f(x, k):
        for _ in range(k):
            x = 4 * x * (1 - x)
        return x
    for k, right in ((50, 1), (55, 0)):
        got, true = f"{f(0.3, k):.6f}", f"{float(f(Decimal('0.3'), k)):.6f}"
        assert got[:2] == true[:2] == "0."                  # the map stays in [0, 1]
        assert next(i for i, (a, b) in enumerate(zip(got[2:], true[2:])) if a != b) == right


def test_lesson_04_taxi_fare():
    _, r, mod = run_lesson("examples/lesson_04_taxi_fare.py")
    expected = {("d <= 2", 1.5): (4000.0, 0.0), ("d <= 2", 5.0): (7000.0, 1000.0),
                ("d <= 2", 2.0): (4000.0, 0.0), ("d < 2", 2.0): (4000.0, 1000.0)}
    for key, want in expected.items():
        value_res, tensor_res = r[key]
        assert value_res == want and tensor_res == want
        fn = mod.fare if key[0] == "d <= 2" else mod.fare_lt
        assert _torch_grad(fn, key[1]) == want


def test_lesson_05_abs_vs_sqrt():
    out, r, _ = run_lesson("examples/lesson_05_abs_vs_sqrt.py")
    assert r[("abs(x)", -3.0)] == (-1.0, -1.0) and r[("sqrt(x*x)", -3.0)] == (-1.0, -1.0)
    assert r[("abs(x)", 0.0)] == (0.0, 0.0)
    assert all(math.isnan(g) for g in r[("sqrt(x*x)", 0.0)])
    assert all(math.isfinite(g) for g in r[("sqrt(x*x+eps)", 0.0)])
    assert all(abs(g + 1.0) < 1e-12 for g in r[("sqrt(x*x+eps)", -3.0)])
    assert _torch_grad(torch.abs, 0.0)[1] == 0.0
    assert math.isnan(_torch_grad(lambda x: torch.sqrt(x * x), 0.0)[1])
    assert _torch_grad(lambda x: torch.sqrt(x * x), -3.0)[1] == -1.0
    assert r["trace"][0] == "sq.grad += 0.5 / r.data * r.grad = 0.5 / 0.0 * 1.0 -> inf"
    assert r["trace"][-1].endswith("= 0.0 * inf -> nan")


def test_lesson_06_accumulation():
    _, r, _ = run_lesson("examples/lesson_06_accumulation.py")
    assert r["value"] == [-4.0, -8.0, -12.0] == r["tensor"]
    assert r["after_zero"] is None
    w = torch.tensor(0.5, requires_grad=True)
    seen = []
    for _ in range(3):
        (0.5 * (w * 2.0 - 3.0) ** 2).backward()
        seen.append(w.grad.item())
    assert seen == r["value"]
    a = torch.tensor(3.0, dtype=torch.float64, requires_grad=True)
    (a * a + 2.0 * a).backward()
    assert r["shared"] == a.grad.item() == 8.0


def test_lesson_07_microbatches():
    _, r, _ = run_lesson("examples/lesson_07_microbatches.py")
    for name, tol in (("float32", 1e-6), ("float64", 1e-14)):
        full, acc, diff, (X, y, W, b) = r[name]
        assert diff < tol and full.size == 3
        # torch, on the same data and weights, full batch
        tW = torch.tensor(W, requires_grad=True)
        tb = torch.tensor(b, requires_grad=True)
        loss = torch.nn.functional.mse_loss(torch.tensor(X) @ tW.T + tb, torch.tensor(y))
        loss.backward()
        ref = np.concatenate([tW.grad.numpy().ravel(), tb.grad.numpy().ravel()])
        np.testing.assert_allclose(full, ref, rtol=1e-5 if name == "float32" else 1e-12)


def test_value_mlp_example_trains():
    path = ROOT / "examples" / "value_mlp.py"
    spec = importlib.util.spec_from_file_location("_value_mlp", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod.STEPS = 6
    mod.N_POINTS = 24
    with contextlib.redirect_stdout(io.StringIO()):
        hist = mod.main()
    assert hist[-1] < 0.7 * hist[0]


def test_lesson_02_picture_shows_the_real_graph():
    """docs/lessons/img/02-value.svg (rendered once with graphviz) shows every value of
    the example graph with the data and grad the script computes."""
    import html
    svg = html.unescape((LESSONS / "img" / "02-value.svg").read_text())
    assert "img/02-value.svg" in (LESSONS / "02-value.md").read_text()
    _, r, mod = run_lesson("examples/lesson_02_value.py")
    w, x, b, u, loss = mod.build()
    loss.backward()
    for v in (w, x, b, u, loss):
        for text in (f">{v.label}<", f">data {v.data}<", f">grad {v.grad}<"):
            assert text in svg, text
    assert svg.count("<ellipse") == 2  # the two ops, * and +


def test_lesson_09_topological_order():
    _, r, mod = run_lesson("examples/lesson_09_topological_order.py")
    tx = torch.tensor(mod.X0, dtype=torch.float64, requires_grad=True)
    ta = tx * 2
    (ta + ta.tanh()).backward()
    want = tx.grad.item()
    assert r["exact"] == pytest.approx(want, rel=1e-15)
    assert r["value_grad"] == pytest.approx(want, rel=1e-15)
    assert r["tensor_grad"] == pytest.approx(want, rel=1e-15)
    naive, visited, topo = r["walks"].values()
    assert topo == pytest.approx(want, rel=1e-15)
    assert naive == pytest.approx(want + 2.0, rel=1e-15)  # a's first share, 1 * 2, twice
    assert visited == 2.0                                 # b's share never reaches x
    for n, (n_values, paths, work, n_mult, grad) in r["table"].items():
        ty = tx0 = torch.tensor(mod.X0, dtype=torch.float64, requires_grad=True)
        for _ in range(n):
            ty = ty + ty.tanh()
        ty.backward()
        assert grad == pytest.approx(tx0.grad.item(), rel=1e-12)
        assert (n_values, paths, n_mult) == (2 * n + 1, 2 ** n, 3 * n)
        assert work == 3 * (2 ** n - 1)
    assert r["big_paths"] == 2 ** mod.COUNT_ONLY
    a_lines = [i for i, line in enumerate(r["trace"]) if line.startswith("a.grad")]
    x_line = next(i for i, line in enumerate(r["trace"]) if line.startswith("x.grad"))
    assert len(a_lines) == 2 and max(a_lines) < x_line    # both shares before a's rule


def _torch_broadcast_grads(shapes, out):
    leaves = [torch.ones(s, dtype=torch.float64, requires_grad=True) for s in shapes]
    y = leaves[0]
    for t in leaves[1:]:
        y = y + t
    m = torch.arange(float(np.prod(out)), dtype=torch.float64).reshape(out)
    (y * m).sum().backward()
    return [t.grad.numpy() for t in leaves], m.numpy()


def test_lesson_10_broadcasting():
    _, r, mod = run_lesson("examples/lesson_10_broadcasting.py")
    (tgx, tgb), m = _torch_broadcast_grads([(4, 3), (3,)], (4, 3))
    np.testing.assert_array_equal(r["gb"], tgb)
    np.testing.assert_array_equal(r["gx"], tgx)
    shapes = {"column c (4, 1) + x (4, 3)": ([(4, 1), (4, 3)], (4, 3)),
              "scalar s () + x (4, 3)": ([(), (4, 3)], (4, 3)),
              "outer sum u (4, 1) + v (1, 3)": ([(4, 1), (1, 3)], (4, 3)),
              "v (3,) + x (2, 4, 3)": ([(3,), (2, 4, 3)], (2, 4, 3))}
    assert set(r["cases"]) == set(shapes)
    for label, (ins, out) in shapes.items():
        want, tm = _torch_broadcast_grads(ins, out)
        for got, w, shape in zip(r["cases"][label], want, ins):
            assert got.shape == w.shape == tuple(shape)
            np.testing.assert_array_equal(got, w)
            np.testing.assert_array_equal(mod.unbroadcast(tm, shape), w)
    assert all(np.array_equal(g, tgb) for g in r["ways"].values())
    assert r["agree"] == mod.N_RANDOM
    add_row = next(line for line in r["table"] if " add " in line)
    assert "y summed over (0,)" in add_row


def test_lesson_10_unbroadcast_against_torch_on_random_shapes():
    rng = np.random.default_rng(1)
    for _ in range(100):
        out = tuple(int(s) for s in rng.integers(1, 4, size=rng.integers(0, 5)))
        shape = tuple(1 if rng.random() < 0.4 else s for s in out)[rng.integers(0, len(out) + 1):]
        g = rng.standard_normal(out)
        t = torch.zeros(shape, dtype=torch.float64, requires_grad=True)
        t.expand(out).backward(torch.tensor(g))
        _, _, mod = run_lesson("examples/lesson_10_broadcasting.py")
        np.testing.assert_allclose(mod.unbroadcast(g, shape), t.grad.numpy(), rtol=1e-12)


def test_lesson_11_inside_a_tensor_walks_the_graph_as_torch_does():
    out, r, mod = run_lesson("examples/lesson_11_inside_a_tensor.py")
    assert r["lines"] == mod.compare_with_torch()      # names, edges, saved values
    x, w, c, h, a, loss = mod.build(torch)
    loss.backward()
    np.testing.assert_allclose(r["grad"], x.grad.numpy(), rtol=1e-6)
    # the whole printed output is torch's too (run main() with torch as the library)
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        mod.main(torch)
    assert buf.getvalue() == out


def test_lesson_11_rule_table_names_are_torchs():
    _, _, mod = run_lesson("examples/lesson_11_inside_a_tensor.py")
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    y = torch.tensor([[0.5, 1.0], [1.5, 2.0]], requires_grad=True)
    rows = mod.rule_table()
    assert [r[0] for r in rows] == list(mod.EXPRESSIONS)
    for (text, name, rule), fn in zip(rows, mod.EXPRESSIONS.values()):
        assert name == type(fn(x, y).grad_fn).__name__, text
        assert rule.startswith(("dx = ", "dX = ")), text
