"""The einsum table entry and the parsing of its equation.

The function (functions_extra.einsum) hands the table an EXPLICIT equation without
ellipsis ("bhqd,bhkd->bhqk"): `normalize` replaces each `...` by letters of its own
and writes the implicit output (the letters that occur once, sorted, after the
ellipsis letters), as torch and NumPy define it.

The rule of operand i is another einsum: the output gradient contracted with the other
operands, producing operand i's subscripts. Two cases need constant helper operands:
  * a letter repeated in operand i ('ii->i', a diagonal): each repeat gets a fresh
    letter and an identity matrix ties it to the first, so the gradient lands on the
    diagonal and is 0 elsewhere;
  * a letter of operand i found nowhere else (summed out, 'ij->i'): a vector of ones of
    that size, so the gradient is broadcast along it.
A size-1 dimension broadcast against a larger one comes back at the larger size; the
engine sums it back to 1 (the one place broadcasting is undone). Since each rule is an
einsum of the same table entry, every order of derivative works.
"""
import string

import numpy as np

from ._within_rule import within_rule
from ..registry import EachInput, defop

LETTERS = string.ascii_uppercase + string.ascii_lowercase


def normalize(equation, shapes):
    """(explicit equation without '...', list of operand subscripts, output subscripts)."""
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    specs = lhs.split(",")
    if len(specs) != len(shapes):
        raise RuntimeError(f"einsum(): {len(specs)} operands in the equation but "
                           f"{len(shapes)} tensors given")
    for s in specs + ([rhs] if arrow else []):
        body = s.replace("...", "")
        bad = [c for c in body if c not in LETTERS]
        if bad or body.count(".") or s.count("...") > 1:
            raise RuntimeError(f"einsum(): invalid subscript given at index "
                               f"{eq.index(bad[0]) if bad else eq.index('.')} in the "
                               f"equation string, subscripts must be in [a-zA-Z]")
    used = set(eq) & set(LETTERS)
    free = [c for c in LETTERS if c not in used]
    n_ell = 0
    for s, shape in zip(specs, shapes):
        named = len(s.replace("...", ""))
        if "..." in s:
            n_ell = max(n_ell, len(shape) - named)
        elif named != len(shape):
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({named}) does not match the number of dimensions "
                               f"({len(shape)}) for operand {specs.index(s)}"
                               + ("" if named > len(shape) else " and no ellipsis was given"))
    if n_ell > len(free):
        raise RuntimeError("einsum(): too many dimensions for the letters left")
    ell = "".join(free[:n_ell])
    out_specs = []
    for s, shape in zip(specs, shapes):
        if "..." in s:
            k = len(shape) - len(s.replace("...", ""))
            s = s.replace("...", ell[n_ell - k:] if k else "")
        out_specs.append(s)
    if arrow:
        out = rhs.replace("...", ell)
        for c in out:
            if out.count(c) > 1:
                raise RuntimeError(f"einsum(): output subscript {c} appears more than once "
                                   "in the output")
            if not any(c in s for s in out_specs):
                raise RuntimeError(f"einsum(): output subscript {c} does not appear in the "
                                   "equation for any input operand")
    else:
        joined = "".join(s for s in specs).replace("...", "")
        out = ell + "".join(sorted(c for c in set(joined) if joined.count(c) == 1))
    return ",".join(out_specs) + "->" + out, out_specs, out


def _split(eq):
    lhs, rhs = eq.split("->")
    return lhs.split(","), rhs


def _forward(*arrays, eq):
    try:
        # optimize=True contracts through BLAS (3.5x faster on an 8x4x64x32 attention
        # product) but costs ~35 us of planning: only for 3+ operands or large arrays
        big = len(arrays) > 2 or sum(np.size(a) for a in arrays) > 4096
        out = np.einsum(eq, *arrays, optimize=big)
    except ValueError as e:
        raise RuntimeError(f"einsum(): {e}") from None
    # a contraction's result is a new array: contiguous, as torch's mostly are (NumPy's
    # order follows the operands; `.view` of it would then be refused)
    if len(arrays) > 1 and type(out) is np.ndarray and not out.flags.c_contiguous:
        return out.copy()  # (C order; np.ascontiguousarray would make a 0-d result 1-d)
    return out


def _grad_equation(eq, i, shape, dtype):
    """(equation, constant operands) of operand i's gradient: g, the others, helpers."""
    specs, out = _split(eq)
    target = list(specs[i])
    others = specs[:i] + specs[i + 1:]
    used = set(eq)
    fresh = iter(c for c in LETTERS if c not in used)
    helpers, helper_specs = [], []
    for pos, c in enumerate(target):
        if c in target[:pos]:  # a repeat: its own letter, tied to the first by eye
            new = next(fresh)
            target[pos] = new
            helpers.append(np.eye(shape[pos], dtype=dtype))
            helper_specs.append(c + new)
    present = set(out) | set("".join(others)) | set("".join(helper_specs))
    for pos, c in enumerate(target):
        if c not in present:  # summed out of this operand only: broadcast g along it
            helpers.append(np.ones(shape[pos], dtype=dtype))
            helper_specs.append(c)
    return ",".join([out] + others + helper_specs) + "->" + "".join(target), helpers


def _rule(i):
    def rule(xp, g, ans, *xs, eq):
        x = xs[i]
        geq, helpers = _grad_equation(eq, i, tuple(x.shape), np.dtype(g.dtype))
        return within_rule(xp, einsum, g, *(xs[:i] + xs[i + 1:]), *helpers, eq=geq)
    rule.__name__ = f"einsum_vjp_{i}"
    return rule


_rule.__doc__ = "operand i gets einsum(g, the other operands -> operand i's subscripts)"


def _jvp(xp, tangents, ans, *xs, eq):
    out = None
    for i, t in enumerate(tangents):
        if t is None:
            continue
        term = within_rule(xp, einsum, *(xs[:i] + (t,) + xs[i + 1:]), eq=eq)
        out = term if out is None else out + term
    return out


einsum = defop("einsum", _forward, inputs=("operands",), vjp=EachInput(_rule), jvp=_jvp,
               text="dx_i = einsum(g, the other operands -> x_i's subscripts)",
               hint=("einsum is linear in each operand: its rule is finite for finite inputs "
                     "(very large values can overflow)"))
