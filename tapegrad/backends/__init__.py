"""`tg.backends`: torch.backends' flags and queries, on a CPU-only library.

The settable flags (`cudnn.benchmark`, `cudnn.deterministic`, `cuda.matmul.allow_tf32`,
...) are plain attributes that keep what a program assigns; they change nothing, since
tapegrad's matmuls and convolutions are NumPy's. The availability queries of the GPU
backends answer False.
"""
from types import SimpleNamespace

from . import cudnn  # noqa: F401  (a module: `import torch.backends.cudnn`)


def _false(*args, **kwargs):
    return False


def _true(*args, **kwargs):
    return True


cuda = SimpleNamespace(
    matmul=SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                           allow_bf16_reduced_precision_reduction=True),
    is_built=_false, flash_sdp_enabled=_false, mem_efficient_sdp_enabled=_false,
    math_sdp_enabled=_true, enable_flash_sdp=lambda enabled: None,
    enable_mem_efficient_sdp=lambda enabled: None, enable_math_sdp=lambda enabled: None)
mps = SimpleNamespace(is_available=_false, is_built=_false)
mkldnn = SimpleNamespace(enabled=True, is_available=_false)
openmp = SimpleNamespace(is_available=_false)
