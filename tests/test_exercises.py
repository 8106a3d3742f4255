"""The exercises (exercises/*.py, docs/exercises/README.md): each solution passes its
checker, each blank skeleton fails it with the list of blanks, and typical mistakes (a
forgotten sum, a lost dim, a missing share, a wrong value) fail with the right message,
so the checker is known to catch them. The solutions are also checked against PyTorch."""
import contextlib
import io
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "exercises"), str(ROOT / "examples")]

import backprop_ninja  # noqa: E402
import broadcast_sum  # noqa: E402
import check  # noqa: E402
import shared_node  # noqa: E402

SOLUTIONS = {
    broadcast_sum: ("exercises/solutions/broadcast_sum.py", "gradients"),
    shared_node: ("exercises/solutions/shared_node.py", "gradients"),
    backprop_ninja: ("examples/manual_backprop.py", "manual_backward"),
}


def _run(module, fn):
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        ok = module.run(fn)
    return ok, buf.getvalue()


@pytest.mark.parametrize("module", list(SOLUTIONS), ids=lambda m: m.__name__)
def test_solution_passes_and_blank_skeleton_fails(module):
    ok, out = _run(module, check.load(*SOLUTIONS[module]))
    assert ok and "gradients match autograd's" in out and "approx: False" not in out
    ok, out = _run(module, module.gradients if hasattr(module, "gradients")
                   else module.manual_backward)
    assert not ok
    assert "still blank" in out and "0 of" in out and "next: d" in out


def test_command_line_exit_status():
    for args, status in ((["exercises/shared_node.py"], 1),
                         (["exercises/shared_node.py", "--solution"], 0)):
        res = subprocess.run([sys.executable, *args], cwd=ROOT, capture_output=True,
                             text=True, timeout=120)
        assert res.returncode == status, res.stdout + res.stderr


def _solution(module):
    return check.load(*SOLUTIONS[module])


def test_broadcast_mistakes_get_shape_hints():
    sol = _solution(broadcast_sum)

    def forgot_sum(v):
        d = sol(v)
        d["b"] = v["dz"] / v["t"]                       # the (5, 4) broadcast gradient
        d["s"] = (v["dz"] * v["y"]).sum(axis=1)         # keepdims forgotten: (5,)
        return d
    ok, out = _run(broadcast_sum, forgot_sum)
    assert not ok
    assert "WRONG SHAPE (5, 4), autograd's is (4,): it has the broadcast result's shape" in out
    assert "WRONG SHAPE (5,), autograd's is (5, 1): the right number of entries" in out
    assert "2 of 4 gradients right; next: ds" in out


def test_shared_node_missing_share_fails_on_the_share_and_below():
    sol = _solution(shared_node)

    def one_use_of_a_times_a(v):
        d = sol(v)
        d["a_from_square"] = v["a"]                     # a * a counted once, not twice
        d["a"] = d["a_from_square"] + d["a_from_linear"] + d["a_from_exp"]
        d["x"], d["w"] = v["w"] * d["a"], v["x"] * d["a"]
        return d
    ok, out = _run(shared_node, one_use_of_a_times_a)
    assert not ok
    bad = [line.split()[0] for line in out.splitlines() if "approx: False" in line]
    assert bad == ["a_from_square", "a", "x", "w"]
    assert "2 of 6 gradients right; next: da_from_square" in out


def test_backprop_ninja_wrong_value_is_named_in_order():
    sol = _solution(backprop_ninja)

    def forgot_second_use(p, v, Xb, Yb):
        d = sol(p, v, Xb, Yb)
        d["counts"] = v["counts_sum_inv"].detach().numpy() * d["probs"]   # first use only
        return d
    ok, out = _run(backprop_ninja, forgot_second_use)
    assert not ok
    assert "next: dcounts (each gradient uses the ones before it" in out


def test_solutions_match_torch():
    """The small solutions against PyTorch's gradients on the same numbers."""
    values, _ = broadcast_sum.forward()
    d = _solution(broadcast_sum)(values)
    L = {k: torch.tensor(values[k], requires_grad=True) for k in ("x", "W", "s", "b", "t")}
    ((L["x"] @ L["W"] * L["s"] + L["b"] / L["t"]) ** 2).mean().backward()
    for k in ("W", "s", "b", "t"):
        np.testing.assert_allclose(d[k], L[k].grad.numpy(), rtol=1e-12, atol=1e-15)
    values, _ = shared_node.forward()
    d = _solution(shared_node)(values)
    x = torch.tensor(values["x"], requires_grad=True)
    w = torch.tensor(values["w"], requires_grad=True)
    a = x * w
    (a * a + 3 * a + a.exp()).sum().backward()
    np.testing.assert_allclose(d["x"], x.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(d["w"], w.grad.numpy(), rtol=1e-12)
