"""THE op database: one entry per table op (and per public composite worth checking),
filed by PyTorch's op families, one module each: tests/opdb/<family>.py.

`OP_DB` is the list every op test (tests/test_opdb.py) runs over: forward values and
gradients vs PyTorch in float64 and float32, hypothesis-generated shapes and values,
float64 gradcheck, second derivatives. A test fails if an op of the derivative table
(`tapegrad.ops.registry.OPS`) is named by no entry.

The families: pointwise, trigonometric, special, comparison, reductions, products,
linalg, shape_views, indexing, random, and torch.nn's (nn_functional, nn_attention,
nn_convolution_pooling, nn_distance). Sample generators several families use live in
`opdb/samples.py`.

HOW TO ADD AN ENTRY (adding an op = one table entry + one database entry)
-------------------------------------------------------------------------
Append it to the `ENTRIES` list of its family's module (or create `tests/opdb/<family>.py`
for a new family) with

    from _opinfo import OpInfo, Sample, op, both, REAL, POSITIVE, SEPARATED, \\
        unary_samples, binary_samples, hyp_elementwise, hyp_reduce
    ENTRIES = [
        op("gather", lambda lib, x, idx: lib.gather(x, 1, idx),
           lambda rng, info: [Sample((rng.standard_normal((3, 4)),
                                      np.array([[0, 0], [3, 1], [2, 2]])))]),
        ...
    ]

Every module of this package is picked up (sorted by name); so is a `tests/opdb_<area>.py`
file, the database's old layout, until its entries are filed by family. The fields (see
`_opinfo.OpInfo`):
  name      the table key (`OPS`) this entry covers; `covers=("a", "b")` adds more keys
  fn        `op(name, lambda lib, *args, **kw: ..., samples)` runs the same code with
            lib = tapegrad and lib = torch; or give tg_fn / torch_fn separately
  samples   `samples(rng, info) -> [Sample(args, kwargs, ...)]`, float64 NumPy arrays
            (the float32 tests cast them); include 0-d, size-1 dims, broadcasting pairs.
            `Sample(gradcheck=False)` for points where finite differences are meaningless
            (ties, kinks, base 0): they are still compared with PyTorch.
  domain    where values lie (REAL, POSITIVE, NONZERO, SEPARATED = away from kinks/ties,
            or a tuple, one Domain per argument)
  hyp       a hypothesis generator `hyp(draw, info) -> Sample` (hyp_elementwise(n),
            hyp_reduce(...)), or None
  differentiable=False for index-valued ops; gradgrad=False when second order does not
            apply; f32_tol / gradcheck_kw to loosen a lossy op (say why in a comment)
"""
import glob
import importlib
import os
import pkgutil
import sys

# Table ops that have no entry YET, by the module that defines them. A temporary
# allowance so that other areas are not blocked: it must be EMPTY when the work is done.
# When you add an entry for one of these, delete it here (the coverage test fails on a
# listed op that has an entry, so that the list stays honest).
_PENDING_BY_AREA = {
}
PENDING = sorted(n for names in _PENDING_BY_AREA.values() for n in names)


def _load_families():
    """ENTRIES of every module of this package (sorted by name), then of any
    tests/opdb_<area>.py file."""
    here = os.path.dirname(os.path.abspath(__file__))
    tests = os.path.dirname(here)
    if tests not in sys.path:
        sys.path.insert(0, tests)
    entries = []
    for info in sorted(pkgutil.iter_modules([here]), key=lambda m: m.name):
        mod = importlib.import_module(f"{__name__}.{info.name}")
        entries.extend(getattr(mod, "ENTRIES", []))
    for path in sorted(glob.glob(os.path.join(tests, "opdb_*.py"))):
        mod = importlib.import_module(os.path.basename(path)[:-3])
        entries.extend(getattr(mod, "ENTRIES", []))
    return entries


OP_DB = _load_families()


def covered_ops():
    return {name for e in OP_DB for name in e.ops()}
