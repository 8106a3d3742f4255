"""Sample generators and value domains that several op-database families use."""
import numpy as np
from hypothesis.extra import numpy as hnp

from _opinfo import SEPARATED, SEPARATED_OFF, Sample, hyp_elementwise


def _ties_full(rng, info):
    return [Sample((np.array([[1.0, 3.0, 3.0], [0.5, 3.0, -2.0]]),), gradcheck=False,
                   note="ties"),
            Sample((np.array([2.0, 2.0]),), gradcheck=False, note="ties")]


E1 = hyp_elementwise(1)


E2 = hyp_elementwise(2)


def _shapes(*specs):
    """specs: (shapes tuple, kwargs) -> one sample each, values from the entry's domains."""
    def gen(rng, info):
        return [Sample(tuple(info.domain_for(i).sample(rng, s) for i, s in enumerate(shapes)),
                       dict(kw)) for shapes, kw in specs]
    return gen


# two operands that never meet (fmax's ties, dist's kink at 0)
APART = (SEPARATED, SEPARATED_OFF)


def _fixed(*arrays, **kw):
    return lambda rng, info: [Sample(tuple(arrays), dict(kw), gradcheck=False, note="fixed")]


def _shaped_samples(*specs):
    """specs: (shapes tuple, kwargs) pairs drawn from the entry's domain."""
    def gen(rng, info):
        return [Sample(tuple(info.domain_for(i).sample(rng, s) for i, s in enumerate(shapes)),
                       dict(kw)) for shapes, kw in specs]
    return gen


def _matrix_samples(ords, shapes=((3, 4), (2, 3, 3), (4, 2))):
    def gen(rng, info):
        return [Sample((rng.uniform(-1.0, 1.0, s),), {"ord": o}) for o in ords for s in shapes]
    return gen


def _one_arg_samples(*specs):
    """specs: tuples (shape, kwargs) -> one float64 sample each (values from N(0, 1))."""
    def gen(rng, info):
        return [Sample((info.domain_for(0).sample(rng, s),), dict(kw)) for s, kw in specs]
    return gen


def _many(*shape_lists):
    """Samples with several array args: each spec is a tuple of shapes (+ kwargs dict)."""
    def gen(rng, info):
        out = []
        for spec in shape_lists:
            kw = spec[-1] if isinstance(spec[-1], dict) else {}
            shapes = spec[:-1] if kw or isinstance(spec[-1], dict) else spec
            out.append(Sample(tuple(info.domain_for(i).sample(rng, s)
                                    for i, s in enumerate(shapes)), dict(kw)))
        return out
    return gen


# ---- hypothesis generators ------------------------------------------------------------
def _shape(draw, min_dims=0, max_dims=3):
    return draw(hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=1, max_side=4))
