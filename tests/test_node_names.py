"""Node names are declared at the table entry (ops/registry.py `node=`), or take the
documented fallback `<CamelCase>Backward0`; a sample is compared with torch's own
`type(grad_fn).__name__`, through ops that declare a name and ops that take the fallback."""
import ast
import pathlib
import re

import numpy as np
import torch

import tapegrad as tg
import tapegrad.nn.functional as F
from tapegrad.core import names
from tapegrad.ops.registry import OPS, Op

_NAME = re.compile(r"^[A-Z][A-Za-z0-9]*Backward\d*$|^CopySlices$")


def test_every_entry_declares_its_node_or_takes_the_fallback():
    assert OPS, "the table is empty: nothing was checked"
    for name, op in OPS.items():
        declared = op.node
        assert declared is None or isinstance(declared, str) or callable(declared), name
        if isinstance(declared, str):
            assert _NAME.match(declared), (name, declared)
            assert declared != names.fallback_name(name), (
                f"op {name!r} declares the name the fallback gives: drop the declaration")
    assert names.fallback_name("log_softmax") == "LogSoftmaxBackward0"
    assert names.fallback_name("MyFnBackward") == "MyFnBackward"  # custom Functions
    # the table of names is gone from core/names.py: the entries hold them
    assert not hasattr(names, "NODE_NAMES")


def _sample(lib, F):
    x = lib.tensor(np.linspace(-1.0, 1.0, 12).reshape(3, 4), requires_grad=True)
    p = lib.tensor(np.linspace(0.5, 2.0, 12).reshape(3, 4), requires_grad=True)
    v = lib.tensor(np.linspace(-1.0, 1.0, 4), requires_grad=True)
    idx = lib.tensor([[0, 1], [2, 3], [1, 0]])
    return {
        # ops that take the fallback name
        "sin": x.sin(), "cos": x.cos(), "exp": x.exp(), "tanh": x.tanh(), "erf": x.erf(),
        "atan2": lib.atan2(x, p), "maximum": lib.maximum(x, p), "cumsum": x.cumsum(1),
        "cumprod": x.cumprod(1), "flip": x.flip(0), "roll": x.roll(1, 0), "tril": x.tril(),
        "gather": x.gather(1, idx), "index_select": x.index_select(0, lib.tensor([0, 2])),
        "softmax": x.softmax(1), "log_softmax": x.log_softmax(1), "var": x.var(1),
        "repeat": x.repeat(2, 1), "clone": x.clone(), "unsqueeze": x.unsqueeze(0),
        "stack": lib.stack([x, p]),
        # ops that declare a fixed name
        "log1p": p.log1p(), "clamp": x.clamp(-0.5, 0.5), "max_dim": x.max(1)[0],
        "max": x.max(), "reshape": x.reshape(12), "narrow": x.narrow(1, 0, 2),
        "pad": F.pad(x, (1, 1)), "cast": x.float(), "vector_norm": lib.linalg.vector_norm(x),
        "layer_norm": F.layer_norm(x, (4,)),
        "cross_entropy": F.cross_entropy(x, lib.tensor([0, 1, 2])),
        # ops that declare a function of the node (the name depends on the arguments)
        "sum": x.sum(), "sum_dim": x.sum(1), "mean_dim": x.mean(0), "prod": p.prod(1),
        "sub": x - p, "rsub": 1 - x, "div": x / p, "rdiv": 1 / p, "pow": x ** 2,
        "pow_tensor": p ** x, "rpow": 2 ** x, "mm": x @ p.mT, "mv": x @ v, "dot": v @ v,
        "vm": v @ p.mT, "amin_dim": x.amin(1), "permute": x.reshape(2, 3, 2).permute(1, 2, 0),
        "squeeze": x.unsqueeze(0).squeeze(0), "select": x[1], "slice": x[1:],
        "index": x[[0, 2]], "linear": F.linear(x, p, v[:3]),
    }


def test_a_sample_of_node_names_matches_torch():
    ours, theirs = _sample(tg, F), _sample(torch, torch.nn.functional)
    got = {k: names.node_name(t.grad_fn) for k, t in ours.items()}
    want = {k: type(t.grad_fn).__name__ for k, t in theirs.items()}
    assert got == want


def test_no_entry_is_patched_after_defop():
    """An entry is whole when `defop` returns: nothing in the package assigns one of an
    Op's fields afterwards (`op.jvp = ...`, `op.hint = ...`)."""
    fields = (set(Op.__slots__) | {"strict_exempt"}) - {"name"}  # `.name =`: too common
    root = pathlib.Path(tg.__file__).parent
    patched = []
    for path in root.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            targets = node.targets if isinstance(node, ast.Assign) else (
                [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
            for t in targets:
                if (isinstance(t, ast.Attribute) and t.attr in fields
                        and not (isinstance(t.value, ast.Name) and t.value.id == "self")):
                    patched.append(f"{path.relative_to(root)}:{t.lineno} .{t.attr}")
    assert not patched


def test_after_backward_frees_the_inputs():
    # backward without retain_graph frees the node's inputs and keeps its args: sum(1)
    # (chosen by the args) still answers; matmul (chosen by the operands' dims) cannot
    # and gets the fallback name
    a = tg.ones(2, 3, requires_grad=True)
    mm, s1 = a @ tg.ones(3, 2), a.sum(1)
    assert (names.node_name(mm.grad_fn), names.node_name(s1.grad_fn)) == (
        "MmBackward0", "SumBackward1")
    (mm.sum() + s1.sum()).backward()
    assert mm.grad_fn.inputs is None
    assert (names.node_name(mm.grad_fn), names.node_name(s1.grad_fn)) == (
        "MatmulBackward0", "SumBackward1")
