"""Index arguments that write one position twice: where a write's rule is not the derivative.

`x[key] = v` and `x.scatter(axis, index, src)` with a position named twice keep ONE of
the values written there (NumPy: the last; PyTorch leaves it unspecified), so the
output does not depend on the others at all. Their rules still send every written
value its gradient (`dv = g[key]`, `dsrc = g.gather(axis, index)`), as PyTorch's do.
These predicates on a node's arguments are the `strict=` of those table entries
(ops/rules/indexing.py): strict mode would otherwise report the PyTorch behaviour as a
wrong rule.
"""
import numpy as np


def scatter_writes_twice(args):
    """scatter: does `index` name one position twice along `axis`?"""
    index, axis = np.asarray(args["index"]), args["axis"]
    if index.ndim == 0 or index.shape[axis] < 2:
        return False
    return bool((np.diff(np.sort(index, axis=axis), axis=axis) == 0).any())


def setitem_writes_twice(args):
    """setitem without accumulate: do the key's integer index arrays name one position
    twice? (A negative and a non-negative index may name the same position; without the
    shape that cannot be told apart, so such a key counts as writing twice.)"""
    if args.get("accumulate", False):
        return False  # index_put(accumulate=True) adds every value: the rule is exact
    arrays = []
    todo = [args["key"]]
    while todo:  # a key is a tuple, possibly of tuples (indexing.SplitKey)
        k = todo.pop()
        if isinstance(k, tuple):
            todo.extend(k)
        elif isinstance(k, np.ndarray) and k.dtype.kind in "iu":
            arrays.append(k)
    if not arrays:
        return False  # ints, slices and masks never name a position twice
    if any((a < 0).any() and (a >= 0).any() for a in arrays):
        return True
    combos = np.stack([a.reshape(-1) for a in np.broadcast_arrays(*arrays)], axis=-1)
    return len(np.unique(combos, axis=0)) < len(combos)
