"""Known failures of the module_db conformance suite (tests/test_torch_module_db.py), each
with its reason: what tapegrad does differently from torch on torch's own module inputs.

Keys are "<module_db entry>:<mode>" (mode: train, eval). A listed entry is an expected
failure; its test fails once the module passes, so the list only shrinks.
"""

KNOWN = {
    "nn.KLDivLoss:train":
        "the gradient w.r.t. the target is NaN where torch's is finite (target 0 with "
        "log_target=False: 0 * log 0 handled as torch's xlogy)",
    "nn.KLDivLoss:eval":
        "the gradient w.r.t. the target is NaN where torch's is finite (target 0 with "
        "log_target=False: 0 * log 0 handled as torch's xlogy)",
    "nn.MaxPool1d:train": "MaxPool1d(return_indices=True) is not supported",
    "nn.MaxPool1d:eval": "MaxPool1d(return_indices=True) is not supported",
}
