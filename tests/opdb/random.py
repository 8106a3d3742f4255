"""Op-database entries: random ops with a gradient: bernoulli (a zero gradient for its
probabilities).

Values and gradients against torch in float64 and float32, gradcheck, second order,
hypothesis where `hyp` is set (tests/test_opdb.py), forward mode (tests/test_forward_mode.py).
"""
import numpy as np

from _opinfo import op
from opdb.samples import _fixed


ENTRIES = [
    # ---- bernoulli: probabilities 0 and 1 draw the same in both libraries; gradient 0 ----
    op("bernoulli", lambda lib, x: lib.bernoulli(x) * x,
       _fixed(np.array([[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])), variant="certain"),
]
