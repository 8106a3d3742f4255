"""Known failures of the module_db conformance suite (tests/test_torch_module_db.py), each
with its reason: what tapegrad does differently from torch on torch's own module inputs.

Keys are "<module_db entry>:<mode>" (mode: train, eval). A listed entry is an expected
failure; its test fails once the module passes, so the list only shrinks.
"""

KNOWN = {
    "nn.KLDivLoss:train":
        "harness: torch's samples 1, 5, 9 pass ONE tensor as input and target; the harness "
        "makes two tapegrad tensors of it, so torch's gradient of input 0 is the sum of "
        "tapegrad's two (values and both gradients match when the tensor is shared)",
    "nn.KLDivLoss:eval":
        "harness: torch's samples 1, 5, 9 pass ONE tensor as input and target; the harness "
        "makes two tapegrad tensors of it, so torch's gradient of input 0 is the sum of "
        "tapegrad's two (values and both gradients match when the tensor is shared)",
    "nn.MaxPool1d:train": "MaxPool1d(return_indices=True) is not supported",
    "nn.MaxPool1d:eval": "MaxPool1d(return_indices=True) is not supported",
}
