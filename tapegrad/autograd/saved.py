"""What a node's backward will actually read: for the in-place version check.

A table entry may declare `saves` (input indices) and `saves_ans`; undeclared
non-linear ops are taken to read every input and their output. That is safe but too
strict: `h = x.sin(); h += 1` would be refused although sin's rule reads only x (PyTorch
allows it). So the check narrows the declaration to what the rules read:

- each VJP rule's code is inspected once (which of its parameters `ans`, `x`, `y`...
  it loads; an elementwise op's derived rule is looked through to its partial);
- only the rules that will run matter: those of inputs that require grad (`a / 2`
  never runs the divisor's rule, which is the one that reads `ans`).

The result is intersected with the declaration, so a declaration can only be
narrowed, never widened; anything that cannot be analysed keeps the declaration.
"""
import dis

import numpy as np

from ..ops import registry

_WRAPPER_CODE = registry._vjp_from_partial(lambda *a: 0).__code__
_CACHE = {}


def _loaded_names(code):
    names = set()
    for ins in dis.get_instructions(code):
        op = ins.opname
        if op.startswith("LOAD_FAST") or op in ("LOAD_DEREF", "LOAD_CLOSURE", "MAKE_CELL",
                                                 "DELETE_FAST"):
            a = ins.argval
            names.update(a if isinstance(a, tuple) else (a,))
    return names


def _analyze(fn, prefix, n_inputs):
    """(reads_ans, input indices read) for a rule whose first `prefix` parameters are
    (xp, g, ans) or (xp, ans); None if unknown."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return None
    if code is _WRAPPER_CODE and fn.__closure__:  # g * partial(...): read the partial
        cells = dict(zip(code.co_freevars, (c.cell_contents for c in fn.__closure__)))
        p = cells.get("p")
        return None if p is None else _analyze(p, 2, n_inputs)
    if code.co_flags & 0x04:  # *args: the inputs are not named
        return None
    params = code.co_varnames[:code.co_argcount]
    if len(params) < prefix + n_inputs:
        return None
    used = _loaded_names(code)
    reads_ans = params[prefix - 1] in used
    reads = {i for i in range(n_inputs) if params[prefix + i] in used}
    return reads_ans, reads


def _rule_info(op):
    """Per input rule: (reads_ans, set of inputs) or None (unknown); None if variadic."""
    info = _CACHE.get(op, False)
    if info is not False:
        return info
    info = None
    vjps = op.vjps
    if isinstance(vjps, tuple) and len(op.input_names) == len(vjps):
        n = len(vjps)
        info = tuple((False, set()) if r is None else _analyze(r, 3, n) for r in vjps)
    _CACHE[op] = info
    return info


def reads(node):
    """(input indices, reads_ans) that `node`'s backward will read, for the version check."""
    op = node.op
    declared = range(len(node.inputs)) if op.saves is None else op.saves
    info = _rule_info(op)
    if info is None:
        saves, saves_ans = tuple(declared), op.saves_ans
    else:
        used, ans = set(), False
        for i, t in enumerate(node.inputs):
            if i >= len(info) or not getattr(t, "_rg", False):
                continue  # no gradient is computed for this input: its rule never runs
            r = info[i]
            if r is None:
                used, ans = set(declared), op.saves_ans
                break
            ans = ans or r[0]
            used |= r[1]
        saves, saves_ans = tuple(i for i in declared if i in used), bool(op.saves_ans and ans)
    # NOTE: arrays the forward saved in the node's keyword arguments (extras such as a
    # normalised input) may BE the output or an input (same memory); then changing that
    # tensor in place changes what backward reads, whatever the declaration says.
    if not saves_ans or len(saves) < len(node.inputs):
        saves, saves_ans = _aliased(node, saves, saves_ans)
    return saves, saves_ans


def _aliased(node, saves, saves_ans):
    arrays = [v for v in node.kw.values() if isinstance(v, np.ndarray) and v.size]
    if not arrays:
        return saves, saves_ans
    if not saves_ans and node.ans is not None and any(
            np.may_share_memory(a, node.ans) for a in arrays):
        saves_ans = True
    extra = [i for i, t in enumerate(node.inputs) if i not in saves and hasattr(t, "data")
             and isinstance(t.data, np.ndarray)
             and any(np.may_share_memory(a, t.data) for a in arrays)]
    return (tuple(saves) + tuple(extra) if extra else saves), saves_ans
