"""torch.return_types: the named tuples of max, sort, topk, ... print as torch's.
"""
import torch

import tapegrad as tg


# ---- torch.return_types ---------------------------------------------------------------------
def test_return_types_print_as_torch():
    x = [[0.1, 0.3], [0.5, 0.2]]
    calls = [lambda l, t: l.sort(t), lambda l, t: l.max(t, 1), lambda l, t: t.min(0),
             lambda l, t: l.topk(t, 1), lambda l, t: l.kthvalue(t, 1), lambda l, t: t.median(0),
             lambda l, t: l.nanmedian(t, 0), lambda l, t: l.histogram(t, 2),
             lambda l, t: l.max(t, 1, out=(l.empty(0), l.empty(0, dtype=l.long)))]
    for call in calls:
        r_tg, r_th = call(tg, tg.tensor(x)), call(torch, torch.tensor(x))
        assert repr(r_tg).replace("tapegrad.", "torch.") == repr(r_th)
        assert str(r_tg).replace("tapegrad.", "torch.") == str(r_th)
        assert type(r_tg).__name__ == type(r_th).__name__
        assert isinstance(r_tg, tuple) and len(r_tg) == len(r_th)
    assert tg.return_types.sort is type(tg.sort(tg.tensor(x)))
    assert tg.return_types.max_out.__name__ == "max_out"
