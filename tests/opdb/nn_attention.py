"""Op-database entries for fused scaled-dot-product attention (tapegrad/ops/rules/attention.py).

Runs the public function (tapegrad.nn.functional._fused_attention vs torch.nn.functional);
the larger cases and the composite reference live in tests/test_attention.py.
"""
import numpy as np
import torch.nn.functional as TF

from _opinfo import OpInfo, Sample
from tapegrad.nn.functional._fused_attention import fused_scaled_dot_product_attention as _sdpa


def _samples(rng, info):
    r = rng.standard_normal
    causal_ok = rng.random((4, 4)) > 0.3
    np.fill_diagonal(causal_ok, True)  # no fully masked row
    return [
        Sample((r((2, 3, 2)), r((2, 4, 2)), r((2, 4, 3)))),
        Sample((r((3, 2)), r((3, 2)), r((3, 2))), {"is_causal": True}, note="causal"),
        Sample((r((1, 2, 4, 3)), r((1, 2, 4, 3)), r((1, 2, 4, 2))), {"scale": 0.3},
               note="scale"),
        Sample((r((2, 4, 2)), r((1, 4, 2)), r((1, 4, 2))), note="broadcast batch"),
        Sample((r((4, 2)), r((4, 2)), r((4, 2)), causal_ok), note="bool mask"),
        Sample((r((4, 2)), r((4, 2)), r((4, 2)), r((4, 4))), nograd=(3,), note="float mask"),
    ]


ENTRIES = [
    OpInfo("scaled_dot_product_attention",
           lambda q, k, v, m=None, **kw: _sdpa(q, k, v, attn_mask=m, **kw),
           lambda q, k, v, m=None, **kw: TF.scaled_dot_product_attention(q, k, v, attn_mask=m,
                                                                          **kw),
           _samples, f32_tol=(1e-5, 1e-5), covers=("attention_probs", "softmax_back_rows", "matmul_heads_inner")),
]
