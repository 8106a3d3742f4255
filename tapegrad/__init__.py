"""tapegrad: reverse-mode automatic differentiation on NumPy, shaped like PyTorch.

    import tapegrad as tg
    x = tg.tensor(3.0, requires_grad=True)
    y = 2 * x ** 2
    y.backward()
    x.grad            # tensor(12.)
"""
from . import dtypes
from .dtypes import (bfloat16, bool, double, dtype, float, float16, float32, float64,
                     get_default_dtype, half, int, int8, int16, int32, int64, long,
                     set_default_dtype, short, uint8)
from ._size import Size
from ._tensor import Tensor
from ._device import device, get_default_device, set_default_device
from .type_info import finfo, iinfo

# ---- the ops: each declared once, with `public(...)`, in its family file (ops/<family>.py);
# EXPORTS maps every declared torch name to what tg.<name> is (the out= form where declared)
from .ops import (comparison as _comparison, conversion as _conversion,  # noqa: F401
                  creation as _creation, indexing as _indexing, linalg as _linalg_ops,
                  pointwise as _pointwise, products as _products, random as _random_ops,
                  reductions as _reductions, shape as _shape, sorting as _sorting,
                  special as _special_ops, spectral as _spectral)
from .ops.public import EXPORTS as _EXPORTS

# ---- the namespaces torch has (tg.linalg, tg.nn, ...) -------------------------------------
from . import linalg, return_types  # tg.linalg: norm, vector_norm, svdvals, ...
from . import special  # tg.special: torch.special's namespace
from . import signal  # tg.signal.windows: torch.signal.windows' window functions
from . import masked  # tg.masked: torch.masked's reductions that skip masked-out elements
from . import fft  # tg.fft: torch.fft's fftshift/ifftshift (no complex dtypes)
from . import autograd, func  # tg.func: jvp, vjp, grad, vmap
from . import nn, optim, utils, data  # layers, optimizers, tg.utils.data, tg.data
from . import amp, distributions, multiprocessing, onnx, version
from . import accelerator, backends, cpu, cuda  # CPU-only answers and flags
from . import viz, testing  # graph pictures; tg.testing.compare
from ._compile import compile  # capture and replay (tapegrad/_compile)

# ---- names torch has at its top level from those namespaces -------------------------------
from .autograd import (enable_grad, inference_mode, is_grad_enabled, no_grad,
                       set_grad_enabled)
from .func import vmap  # torch.vmap is torch.func.vmap
from . import sparse  # torch.sparse: a dense stand-in for COO tensors
from .sparse import sparse_coo_tensor, spmm
from .nn.functional.vision import pixel_shuffle, pixel_unshuffle
from ._native_norms import native_batch_norm, native_group_norm, native_layer_norm
from .nn.functional.vision import grid_sampler, grid_sampler_2d, grid_sampler_3d
from .amp import autocast  # torch.autocast: the region's state (full precision)
from .amp.autocast_mode import (autocast_decrement_nesting,
                                autocast_increment_nesting, clear_autocast_cache,
                                get_autocast_dtype, is_autocast_cache_enabled,
                                is_autocast_cpu_enabled, is_autocast_enabled,
                                set_autocast_cache_enabled, set_autocast_dtype,
                                set_autocast_enabled)
from .viz.explain import explain
from .value import Value

# ---- state and settings --------------------------------------------------------------------
from .random import (Generator, default_generator, get_rng_state, initial_seed,
                     manual_seed, seed, set_rng_state)
from .serialization import load, save
from .version import __version__
from .settings import get_float32_matmul_precision, set_float32_matmul_precision
from .printing import get_printoptions, printoptions, set_printoptions
from .threads import (get_num_interop_threads, get_num_threads,
                      set_num_interop_threads, set_num_threads)
from .deterministic import (are_deterministic_algorithms_enabled,
                            get_deterministic_debug_mode,
                            is_deterministic_algorithms_warn_only_enabled,
                            set_deterministic_debug_mode, use_deterministic_algorithms)
from .legacy import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor,
                     DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor,
                     ShortTensor, set_default_tensor_type)
# torch's math constants (plain Python floats, as in torch): x.masked_fill(m, -torch.inf)
from math import e, inf, nan, pi

newaxis = None
globals().update(_EXPORTS)  # tg.exp, tg.cat, tg.zeros, ...: every declared op


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()
