"""Exercise: accumulation at a shared node (lesson 6).

    a = x * w                         x (3,), w (3,)
    y = a * a + 3 * a + exp(a)        a is used four times: twice by a * a, by 3 * a, by exp
    loss = y.sum()

Fill in the share of the gradient that reaches `a` through each term (as if that term
alone were the loss), their sum, da, and then dx and dw. Then run

    python exercises/shared_node.py

The shares are checked against autograd on each term alone; da, dx and dw against the
whole loss. The solution is exercises/solutions/shared_node.py (`--solution` checks it).
"""
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "exercises")]

import tapegrad as tg  # noqa: E402
from check import check, main  # noqa: E402

TERMS = {"a_from_square": lambda a: a * a, "a_from_linear": lambda a: 3 * a,
         "a_from_exp": lambda a: a.exp()}


def gradients(v):
    """v: x, w, a as NumPy arrays."""
    x, w, a = v["x"], v["w"], v["a"]
    d = {}
    d["a_from_square"] = ...   # through a * a (a is both factors)
    d["a_from_linear"] = ...   # through 3 * a
    d["a_from_exp"] = ...      # through exp(a)
    d["a"] = ...              # a's gradient: every use adds its share
    d["x"] = ...              # a = x * w
    d["w"] = ...
    return d


def forward():
    x = tg.tensor([0.5, -1.0, 2.0], dtype=tg.float64, requires_grad=True)
    w = tg.tensor([1.5, 0.25, -0.5], dtype=tg.float64, requires_grad=True)
    a = x * w
    a.retain_grad()
    (a * a + 3 * a + a.exp()).sum().backward()
    tensors = {}
    for name, term in TERMS.items():       # each share: the gradient of that term alone
        leaf = a.detach().requires_grad_()
        term(leaf).sum().backward()
        tensors[name] = leaf
    tensors.update(a=a, x=x, w=w)
    values = {"x": x.detach().numpy(), "w": w.detach().numpy(), "a": a.detach().numpy()}
    return values, tensors


def run(fn=gradients):
    values, tensors = forward()
    return check(fn(values), tensors)


if __name__ == "__main__":
    main(run, gradients, "exercises/solutions/shared_node.py")
