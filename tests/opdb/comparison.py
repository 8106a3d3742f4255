"""Op-database entries: the comparison ops with a gradient: maximum, minimum, fmax, fmin.

Values and gradients against torch in float64 and float32, gradcheck, second order,
hypothesis where `hyp` is set (tests/test_opdb.py), forward mode (tests/test_forward_mode.py).
"""
import numpy as np

from _opinfo import SEPARATED, SEPARATED_OFF, Sample, binary_samples, op
from opdb.samples import APART, E2


def _nan_binary(rng, info):
    return [Sample((np.array([1.0, np.nan, 2.0, np.nan]), np.array([np.nan, 1.0, 3.0, np.nan])),
                   gradcheck=False, note="nan"),
            Sample((np.array([[np.nan], [1.0]]), np.array([0.5, np.nan, 1.0])),
                   gradcheck=False, note="nan broadcast")]


ENTRIES = [
    # ---- maximum / minimum (ties: half the gradient to each side) ----
    op("maximum", lambda lib, x, y: lib.maximum(x, y), binary_samples(),
       domain=(SEPARATED, SEPARATED_OFF), hyp=E2),
    op("minimum", lambda lib, x, y: lib.minimum(x, y), binary_samples(),
       domain=(SEPARATED, SEPARATED_OFF), hyp=E2),
    op("maximum", lambda lib, x, y: (lib.maximum(x, y), lib.minimum(x, y)),
       lambda rng, info: [Sample((np.array([1.0, 2.0, -1.0]), np.array([1.0, 0.5, -1.0])),
                                 gradcheck=False, note="ties"),
                          Sample((np.array([[0.0], [1.0]]), np.array([0.0, 1.0, 2.0])),
                                 gradcheck=False, note="ties")],
       variant="ties", covers=("minimum",)),
    op("maximum", lambda lib, x, y: (lib.max(x, y), lib.min(x, y)), binary_samples(),
       domain=(SEPARATED, SEPARATED_OFF), variant="max_min_binary", covers=("minimum",)),
    op("maximum", lambda lib, x, y: (lib.maximum(x, y), lib.minimum(x, y)), _nan_binary,
       variant="nan", covers=("minimum",)),
    op("fmax", lambda lib, x, y: lib.fmax(x, y), binary_samples(), domain=APART, hyp=E2),
    op("fmin", lambda lib, x, y: x.fmin(y), binary_samples(), domain=APART, hyp=E2),
]
