"""Op-database entries: torch.nn's distance functions: cosine_similarity, pairwise_distance.

Values and gradients against torch in float64 and float32, gradcheck, second order,
hypothesis where `hyp` is set (tests/test_opdb.py), forward mode (tests/test_forward_mode.py).
"""
from _opinfo import op
from opdb.samples import APART, _shapes


ENTRIES = [
    op("cosine_similarity", lambda lib, a, b, **kw: lib.cosine_similarity(a, b, **kw), _shapes(
        (((3, 4), (3, 4)), {}), (((2, 3, 4), (3, 4)), dict(dim=-1)), (((4,), (4,)), dict(dim=0)),
        (((2, 1, 3), (1, 4, 3)), dict(dim=2)))),
    op("pairwise_distance", lambda lib, a, b, **kw: lib.pairwise_distance(a, b, **kw), _shapes(
        (((3, 4), (3, 4)), {}), (((2, 3, 4), (3, 4)), dict(p=1.0)),
        (((4,), (4,)), dict(keepdim=True)),
        (((3, 2), (1, 2)), dict(p=3.0, eps=0.0))), domain=APART),
]
