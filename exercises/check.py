"""The checker of the exercises: each hand-written gradient against autograd's.

`check(manual, tensors)` takes the learner's gradients (name -> array; `...`, the blank,
for one not written yet) and the tensors whose `.grad` autograd filled, in the order of
the backward pass. For each name it prints `tg.testing.compare`'s line (exact, approx,
maxdiff), or says what is wrong: the wrong shape (with a hint when the
shapes differ by a broadcast: a sum is missing), or wrong values (approx False); the blanks are listed in one line. It returns True when
every gradient is right (allclose), and ends with what to do next.

`main(run, gradients, solution)` is each exercise's command line: `python
exercises/X.py` checks the learner's `gradients`; `--solution` checks the solution's
instead (what a finished exercise prints). The exit status is 0 when all are right.
"""
import importlib.util
import sys
from pathlib import Path

import numpy as np

from tapegrad.testing import compare

ROOT = Path(__file__).resolve().parents[1]


def _shape_hint(got, want):
    """Why a gradient has the wrong shape: the two usual slips, else the rule."""
    size_got, size_want = int(np.prod(got)), int(np.prod(want))
    if size_got == size_want:
        return "the right number of entries: keep the summed dim (keepdims=True) or reshape"
    try:
        broadcast = np.broadcast_shapes(tuple(got), tuple(want)) == tuple(got)
    except ValueError:
        broadcast = False
    if broadcast and size_got > size_want:
        return ("it has the broadcast result's shape: sum over the dims that broadcasting "
                "added or stretched (lesson 10)")
    return "a gradient has the shape of its tensor"


def check(manual, tensors, rtol=1e-5, atol=1e-8, ordered=False):
    """Compare every manual gradient with autograd's; print a report; True if all right.
    `ordered`: each gradient uses the ones before it (a backward pass), so say so."""
    ok, first_bad, blanks = 0, None, []
    width = max(15, *(len(n) for n in tensors))      # compare's name column is 15 wide
    for name, tensor in tensors.items():
        got = manual.get(name, ...)
        if got is ...:
            blanks.append(f"d{name}")
        else:
            got = np.asarray(got)
            want = tuple(tensor.grad.shape)
            if got.shape != want:
                print(f"{name:{width}s} | WRONG SHAPE {got.shape}, autograd's is {want}: "
                      f"{_shape_hint(got.shape, want)}")
            else:
                res = compare(f"{name:{width}s}", got, tensor, rtol=rtol, atol=atol)
                if res.approx:
                    ok += 1
                    continue
        first_bad = first_bad or name
    total = len(tensors)
    if blanks:
        print(f"still blank ({len(blanks)}): {', '.join(blanks)}")
    if first_bad is None:
        print(f"all {total} gradients match autograd's")
        return True
    order = " (each gradient uses the ones before it: go in this order)" if ordered else ""
    print(f"{ok} of {total} gradients right; next: d{first_bad}{order}")
    return False


def load(path, name):
    """The function `name` of the Python file `path` (relative to the repository)."""
    spec = importlib.util.spec_from_file_location(f"_solution_{Path(path).stem}", ROOT / path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return getattr(mod, name)


def main(run, gradients, solution, name="gradients"):
    """Check `gradients` (or, with --solution, the solution file's); exit 0 if all right."""
    if "--solution" in sys.argv[1:]:
        gradients = load(solution, name)
    sys.exit(0 if run(gradients) else 1)
