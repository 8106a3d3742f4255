"""Worked examples 3 (logistic map, tensor form), 6 (accumulation), 7 (micro-batches),
and the million-node chain (the engine walks the graph without recursion).

The numbers asserted are the ones in shared/spec/worked-examples.md; each is also
checked against an independent computation (exact chain-rule product, PyTorch).
"""
import math

import numpy as np
import torch

import tapegrad as tg


# ---- 3. the logistic map -------------------------------------------------------------
def logistic(x, k):
    for _ in range(k):
        x = 4 * x * (1 - x)
    return x


def exact_derivative(x0, k):
    """Chain rule by hand: f' = prod_i 4*(1 - 2*x_i) over the iterates x_0 .. x_{k-1}."""
    d, x = 1.0, x0
    for _ in range(k):
        d *= 4 * (1 - 2 * x)
        x = 4 * x * (1 - x)
    return d


def count_nodes(t):
    """Nodes reachable from t (the tape), by an explicit stack."""
    seen, stack = set(), [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        stack.extend(i.grad_fn for i in n.inputs if isinstance(i, tg.Tensor))
    return len(seen)


def test_logistic_map_k6_reverse_mode():
    x = tg.tensor(0.3, dtype=tg.float64, requires_grad=True)
    y = logistic(x, 6)
    assert count_nodes(y) == 18  # 3 recorded ops per iteration
    y.backward()
    g = x.grad.item()
    assert round(g, 10) == -65.1931590859
    assert abs(g - exact_derivative(0.3, 6)) < 1e-13  # the spec says about 4e-14
    tx = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    logistic(tx, 6).backward()
    assert abs(g - tx.grad.item()) < 1e-13


def test_logistic_map_forward_difference_errors():
    """(f(x+h) - f(x)) / h: no step size gets more than ~10 correct digits."""
    exact = exact_derivative(0.3, 6)
    expected = {1e-6: 1.8e-3, 1e-8: 1.8e-5, 1e-10: 6.8e-6, 1e-12: 4.7e-3, 1e-14: 0.049}
    with tg.no_grad():
        f0 = logistic(tg.tensor(0.3, dtype=tg.float64), 6).item()
        for h, want in expected.items():
            fh = logistic(tg.tensor(0.3 + h, dtype=tg.float64), 6).item()
            err = abs((fh - f0) / h - exact)
            assert float(f"{err:.2g}") == want, (h, err)
    assert min(expected.values()) > 1e-6  # never better than ~1e-6 absolute: ~8 digits


def test_logistic_map_k100000_no_recursion():
    x = tg.tensor(0.3, dtype=tg.float64, requires_grad=True)
    y = logistic(x, 100_000)
    assert count_nodes(y) == 300_000
    with np.errstate(over="ignore", invalid="ignore"):
        y.backward()  # 300,000 nodes: a recursive walk would hit RecursionError
    # |f'| ~ 2**k overflows: once the incoming gradient is inf, the two paths through
    # 4*x*(1-x) contribute +inf and -inf, and their sum is nan (PyTorch agrees: below)
    assert np.isnan(x.grad.item())
    x2 = tg.tensor(0.3, dtype=tg.float64, requires_grad=True)
    with np.errstate(over="ignore", invalid="ignore"):
        logistic(x2, 1100).backward()
    tx = torch.tensor(0.3, dtype=torch.float64, requires_grad=True)
    logistic(tx, 1100).backward()
    np.testing.assert_equal(x2.grad.item(), tx.grad.item())
    assert np.isnan(tx.grad.item())
    # a shorter chain stays finite and equals the exact product
    x3 = tg.tensor(0.3, dtype=tg.float64, requires_grad=True)
    logistic(x3, 40).backward()
    assert math.isclose(x3.grad.item(), exact_derivative(0.3, 40), rel_tol=1e-6)


def test_million_node_chain():
    """1,000,000 recorded ops, backprop without recursion; d/dx (x * c**n) = c**n."""
    n, c = 1_000_000, 1.0000001
    x = tg.tensor(1.0, dtype=tg.float64, requires_grad=True)
    y = x
    for _ in range(n):
        y = y * c
    y.backward()
    want = 1.0
    for _ in range(n):
        want *= c
    assert math.isclose(x.grad.item(), want, rel_tol=1e-12)
    assert math.isclose(want, c ** n, rel_tol=1e-9)


# ---- 6. gradients accumulate ---------------------------------------------------------------
def test_accumulation_over_backward_calls():
    w = tg.tensor(0.5, requires_grad=True)
    x, y = tg.tensor(2.0), tg.tensor(3.0)
    seen = []
    for _ in range(3):
        L = 0.5 * (w * x - y) ** 2
        L.backward()
        seen.append(w.grad.item())
    assert seen == [-4.0, -8.0, -12.0]
    tw = torch.tensor(0.5, requires_grad=True)
    for _ in range(3):
        (0.5 * (tw * 2.0 - 3.0) ** 2).backward()
    assert tw.grad.item() == seen[-1]
    w.grad = None  # what zero_grad(set_to_none=True) does
    (0.5 * (w * x - y) ** 2).backward()
    assert w.grad.item() == -4.0


def test_value_used_twice_gets_the_sum():
    w = tg.tensor(0.5, dtype=tg.float64, requires_grad=True)
    x = tg.tensor(2.0, dtype=tg.float64)
    (w * x + w * w).backward()  # two uses of w: x + 2w
    assert w.grad.item() == 2.0 + 2 * 0.5
    u = tg.tensor(1.5, dtype=tg.float64, requires_grad=True)
    v = u * 3.0
    (v * v).backward()  # v used twice inside one backward: d/du = 2 * v * 3
    assert u.grad.item() == 2 * 4.5 * 3.0


# ---- 7. gradient accumulation over micro-batches ------------------------------------------
def _linear_mse(w, b, X, Y):
    return (((X @ w) + b - Y) ** 2).mean()


def test_micro_batch_accumulation_matches_full_batch():
    rng = np.random.default_rng(7)
    X = rng.standard_normal((32, 2)).astype(np.float32)
    Y = (X @ np.array([1.5, -0.5]) + 0.3 + 0.1 * rng.standard_normal(32)).astype(np.float32)
    w0, b0 = np.array([0.2, 0.1], dtype=np.float32), np.array(0.0, dtype=np.float32)

    w, b = tg.tensor(w0, requires_grad=True), tg.tensor(b0, requires_grad=True)
    _linear_mse(w, b, tg.tensor(X), tg.tensor(Y)).backward()
    full = np.concatenate([w.grad.numpy(), b.grad.numpy().reshape(1)])

    w2, b2 = tg.tensor(w0, requires_grad=True), tg.tensor(b0, requires_grad=True)
    for i in range(4):  # 4 micro-batches of 8, zeroing only after all four
        sl = slice(8 * i, 8 * i + 8)
        (_linear_mse(w2, b2, tg.tensor(X[sl]), tg.tensor(Y[sl])) / 4).backward()
    micro = np.concatenate([w2.grad.numpy(), b2.grad.numpy().reshape(1)])
    assert full.dtype == np.float32 and full.shape == (3,)  # a 3-parameter model
    np.testing.assert_allclose(micro, full, rtol=0, atol=1e-6)
    assert np.max(np.abs(micro - full)) < 1e-6  # the spec: identical to ~1e-7

    tw, tb = torch.tensor(w0, requires_grad=True), torch.tensor(b0, requires_grad=True)
    _linear_mse(tw, tb, torch.tensor(X), torch.tensor(Y)).backward()
    np.testing.assert_allclose(full, np.concatenate([tw.grad.numpy(), [tb.grad.item()]]),
                               rtol=1e-5, atol=1e-6)
