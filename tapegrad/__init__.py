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
from .ops import (comparison, conversion, creation, indexing, linalg as _linalg_ops,  # noqa: F401
                  pointwise, products, random as _random_ops, reductions, shape, sorting,
                  special as _special_ops, spectral)
from .ops.public import EXPORTS as _EXPORTS
globals().update(_EXPORTS)
del comparison, conversion, creation, indexing, pointwise, products, reductions, shape
del sorting, spectral


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


# ---- the namespaces torch has (tg.linalg, tg.nn, ...) -------------------------------------
from . import linalg, return_types  # noqa: E402  tg.linalg: norm, vector_norm, svdvals, ...
from . import autograd, func  # noqa: E402  tg.func: jvp, vjp, grad, vmap
from . import nn, optim, utils, data  # noqa: E402  layers, optimizers, tg.utils.data, tg.data
from . import amp, distributions, multiprocessing, onnx, version  # noqa: E402
from . import accelerator, backends, cpu, cuda  # noqa: E402  CPU-only answers and flags
from . import viz, testing  # noqa: E402  graph pictures; tg.testing.compare
from ._compile import compile  # noqa: E402  capture and replay (tapegrad/_compile)

# ---- names torch has at its top level from those namespaces -------------------------------
from .autograd import (enable_grad, inference_mode, is_grad_enabled, no_grad,  # noqa: E402
                       set_grad_enabled)
from .func import vmap  # noqa: E402  torch.vmap is torch.func.vmap
from .nn.functional_pixel_shuffle import pixel_shuffle, pixel_unshuffle  # noqa: E402
from .amp import autocast  # noqa: E402  torch.autocast: the region's state (full precision)
from .amp.autocast_mode import (autocast_decrement_nesting,  # noqa: E402
                                autocast_increment_nesting, clear_autocast_cache,
                                get_autocast_dtype, is_autocast_cache_enabled,
                                is_autocast_cpu_enabled, is_autocast_enabled,
                                set_autocast_cache_enabled, set_autocast_dtype,
                                set_autocast_enabled)
from .viz.explain import explain  # noqa: E402
from .value import Value  # noqa: E402

# ---- state and settings --------------------------------------------------------------------
from .random import (Generator, default_generator, get_rng_state, initial_seed,  # noqa: E402
                     manual_seed, seed, set_rng_state)
from .serialization import load, save  # noqa: E402
from .version import __version__  # noqa: E402
from .settings import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402
from .printing import get_printoptions, printoptions, set_printoptions  # noqa: E402
from .threads import (get_num_interop_threads, get_num_threads,  # noqa: E402
                      set_num_interop_threads, set_num_threads)
from .deterministic import (are_deterministic_algorithms_enabled,  # noqa: E402
                            get_deterministic_debug_mode,
                            is_deterministic_algorithms_warn_only_enabled,
                            set_deterministic_debug_mode, use_deterministic_algorithms)
from .legacy import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor,  # noqa: E402
                     DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor,
                     ShortTensor, set_default_tensor_type)
# torch's math constants (plain Python floats, as in torch): x.masked_fill(m, -torch.inf)
from math import e, inf, nan, pi  # noqa: E402
newaxis = None
