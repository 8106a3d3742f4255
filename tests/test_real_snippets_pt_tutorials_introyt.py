"""Programs in the style of pytorch/tutorials' introyt series (autogradyt: walking
`grad_fn`, AccumulateGrad of the same leaf; modelsyt: `torch.functional`), run with
torch and with tapegrad; what they print must agree (tests/_snippets.py). Written for
these tests, not copied.
"""
import math

import importlib

import tapegrad as tg

from _snippets import assert_same_output


# ------------------------------------------------ introyt/autogradyt: walking grad_fn
def test_autogradyt_grad_fn_chain_prints_like_torch():
    def program(torch, print):
        a = torch.linspace(0., 2. * math.pi, steps=5, requires_grad=True)
        b = torch.sin(a)
        c = 2 * b
        d = c + 1
        out = d.sum()
        print(out.grad_fn)
        print(d.grad_fn)
        print(d.grad_fn.next_functions)
        print(d.grad_fn.next_functions[0][0].next_functions)
        print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
        acc = d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0]
        print(acc.next_functions, type(acc).__name__, acc.variable is a, acc.name())
        print(c.grad_fn, b.grad_fn, a.grad_fn)
        print(str(b.grad_fn).split(" ")[0])
        out.backward()
        print(a.grad)

    assert_same_output(program)


def test_accumulate_grad_of_the_same_leaf_compares_equal():
    w = tg.ones(3, requires_grad=True)
    y = w * w
    (f1, _), (f2, _) = y.grad_fn.next_functions
    assert f1 == f2 and hash(f1) == hash(f2) and f1.variable is w
    assert y.grad_fn.next_functions[0][0] in {f2}
    x = tg.ones(3, requires_grad=True)
    assert (x * w).grad_fn.next_functions[0][0] != f1


# ------------------------------------------------ introyt/modelsyt: import torch.functional
def test_torch_functional_module_holds_the_top_level_functions():
    F = importlib.import_module("tapegrad.functional")
    TF = importlib.import_module("torch.functional")
    for name in F.__all__:
        assert getattr(F, name) is getattr(tg, name), name
        assert name in TF.__all__, name
    assert_same_output(lambda torch, print: print(
        torch.functional.split(torch.arange(5), 2), torch.functional.einsum("i,i->", torch.ones(3), torch.ones(3))))
