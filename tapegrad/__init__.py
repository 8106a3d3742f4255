"""tapegrad: reverse-mode automatic differentiation on NumPy, shaped like PyTorch.

    import tapegrad as tg
    x = tg.tensor(3.0, requires_grad=True)
    y = 2 * x ** 2
    y.backward()
    x.grad            # tensor(12.)
"""
from . import dtypes
from .dtypes import (bool, double, dtype, float, float16, float32, float64, get_default_dtype, half,
                     int, int8, int16, int32, int64, long, set_default_dtype, short, uint8)
from ._tensor import Size, Tensor
from .ops import functions as _functions
from .ops.functions import (abs, absolute, add, allclose, amax, amin, argmax, argmin, bmm,
                            broadcast_to, clamp, clip, clone, cos, div, divide, dot, eq, equal,
                            exp, expand, ge, greater, greater_equal, gt, isfinite, isinf, isnan,
                            le, less, less_equal, log, log_softmax, logical_and, logical_not,
                            logical_or, logical_xor, logsumexp, lt, matmul, max, maximum, mean,
                            min, minimum, mm, mul, multiply, ne, neg, negative, permute, pow,
                            prod, relu, reshape, rsqrt, sigmoid, sign, sin, softmax, sqrt, std,
                            sub, subtract, sum, swapaxes, swapdims, t, tanh, transpose,
                            true_divide, var, where)
from .ops.functions import (all, any, ceil, clamp_max, clamp_min, cumsum, expm1, fix,  # noqa: E402
                            floor, floor_divide, fmod, log1p, log2, log10, outer, remainder,
                            trunc)
from .ops.functions_extra import (bernoulli, bincount, diag, diag_embed, diagonal,  # noqa: E402
                                  einsum, erf, erfc, erfinv, histc, histogram, median,
                                  meshgrid, nan_to_num, nanmedian, relu_, trace)
from .ops.linalg_functions import norm  # noqa: E402
from .ops.linalg_solve_functions import (cross, det, inverse, logdet,  # noqa: E402
                                          slogdet)
from .ops.linalg_decomp_functions import svd  # noqa: E402
from .ops.shape_functions import (cat, chunk, concat, concatenate, flatten, flip, fliplr,
                                  flipud, hstack, moveaxis, movedim, narrow, repeat, roll,
                                  select, split, squeeze, stack, tensor_split, tril, triu,
                                  unbind, unflatten, unsqueeze, vstack)
from .ops.index_functions import (argsort, argwhere, gather, index_add, index_put, index_put_,
                                  index_select, kthvalue, masked_fill, masked_select,
                                  multinomial, nonzero, repeat_interleave, scatter,
                                  scatter_add, sort, take_along_dim, topk, unique)
from .creation import (arange, as_tensor, empty, empty_like, eye, from_numpy, full, full_like,
                       linspace, ones, ones_like, rand, rand_like, randint, randint_like,
                       randn, randn_like, randperm, tensor, zeros, zeros_like)
from .out_functions import (abs, add, arange, bmm, cat, ceil, clamp, clip,  # noqa: E402,F811
                            concat, concatenate, cos, cumprod, cumsum, div, divide, einsum,
                            empty, erf, erfc, erfinv, exp, expm1, eye, floor, fmod, full, histc,
                            linspace, log, log1p, log2, log10, logsumexp, matmul, maximum, mean,
                            minimum, mm, mul, multiply, nan_to_num, neg, ones, pow, prod, rand,
                            randint, randn, randperm, remainder, round, sigmoid, sin, sqrt,
                            stack, sub, subtract, sum, tanh, true_divide, trunc, where, zeros)
from .out_functions import (acos, acosh, arccos, arccosh, arcsin, arcsinh,  # noqa: E402
                            arctan, arctan2, arctanh, asin, asinh, atan, atan2,
                            atanh, cosh, sinh, tan)
from . import linalg  # noqa: E402  tg.linalg: norm, vector_norm, matrix_norm, svdvals
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed,
                     seed, set_rng_state)
from . import autograd
from .autograd import enable_grad, is_grad_enabled, no_grad, set_grad_enabled
from .autograd import inference_mode
from . import func  # noqa: E402  function transforms: jvp, vjp, grad
from .func import vmap  # noqa: E402  torch.vmap is torch.func.vmap
from .value import Value
from . import viz  # noqa: E402  graph pictures (draw, to_dot), narrated backward
from . import testing  # noqa: E402  tg.testing.compare: the manual-backprop check
from .viz.explain import explain  # noqa: E402
from . import nn  # noqa: E402  tg.nn: Module, layers, losses, functional, init
from .nn.functional_pixel_shuffle import pixel_shuffle, pixel_unshuffle  # noqa: E402
from . import optim, utils, data  # noqa: E402  optimizers, tg.utils.data, tg.data.MNIST
from . import amp  # noqa: E402  tg.amp: GradScaler (float16 loss scaling)
from .amp import autocast  # noqa: E402  torch.autocast: the region's state (full precision)
from .amp.autocast_mode import (autocast_decrement_nesting,  # noqa: E402
                                autocast_increment_nesting, clear_autocast_cache,
                                get_autocast_dtype, is_autocast_cache_enabled,
                                is_autocast_cpu_enabled, is_autocast_enabled,
                                set_autocast_cache_enabled, set_autocast_dtype,
                                set_autocast_enabled)
from . import distributions  # noqa: E402  tg.distributions: Categorical
from . import multiprocessing  # noqa: E402  torch.multiprocessing; registers shared tensors' pickling
from .serialization import load, save  # noqa: E402

from . import version  # noqa: E402  torch.version: __version__, cuda (None), ...
from .version import __version__  # noqa: E402
# torch's math constants (plain Python floats, as in torch): x.masked_fill(m, -torch.inf)
from math import e, inf, nan, pi  # noqa: E402
newaxis = None


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()
from . import onnx  # noqa: E402  torch.onnx's import path (export is not supported)
from .dtypes import bfloat16  # noqa: E402  exists; tensors of it are refused by name
from .type_info import finfo, iinfo  # noqa: E402  a dtype's limits (eps, min, max)
from ._device import device, get_default_device, set_default_device  # noqa: E402
from . import accelerator, backends, cpu, cuda  # noqa: E402  CPU-only answers and flags
from .settings import get_float32_matmul_precision, set_float32_matmul_precision  # noqa: E402
from ._compile import compile  # noqa: E402  capture and replay (tapegrad/_compile)
from .legacy import (BFloat16Tensor, BoolTensor, ByteTensor, CharTensor,  # noqa: E402
                     DoubleTensor, FloatTensor, HalfTensor, IntTensor, LongTensor,
                     ShortTensor)
from .printing import get_printoptions, printoptions, set_printoptions  # noqa: E402
from .ops.functions import can_cast, promote_types, result_type  # noqa: E402
from .ops.functions import (bitwise_and, bitwise_not, bitwise_or,  # noqa: E402
                            bitwise_xor)
from .ops.functions_extra import reciprocal, square  # noqa: E402,F811
from .out_functions import (amax, amin, argmax, argmin, argsort, gather,  # noqa: E402,F811
                            index_select, kthvalue, masked_select, max, median, min,
                            nanmedian, negative, reciprocal, relu, rsqrt, sign, sort,
                            square, std, topk, var)
# torch's in-place functions: torch.erf_(x) is x.erf_()
from .ops.inplace import (abs_, clamp_, clamp_max_, clamp_min_, cos_, exp_,  # noqa: E402
                          fill_, log_, neg_, sigmoid_, sin_, sqrt_, rsqrt_, tanh_, zero_)
from .ops.inplace_more import (ceil_, erf_, erfc_, expm1_, floor_, log1p_,  # noqa: E402
                               log2_, log10_, nan_to_num_, reciprocal_, round_, square_,
                               trunc_)
from .ops.inplace_more import (acos_, acosh_, arccos_, arccosh_, arcsin_,  # noqa: E402
                               arcsinh_, arctan_, arctanh_, asin_, asinh_, atan_, atanh_,
                               cosh_, sinh_, tan_)
fix_, negative_, clip_ = trunc_, neg_, clamp_  # noqa: E305  torch's aliases
from .ops.functions_composite import (addcdiv, addcmul, addmm, broadcast_tensors,  # noqa: E402
                                      count_nonzero, isclose, lerp, mv, ravel, tile)
from . import return_types  # noqa: E402  torch.return_types: max, sort, topk, ... (+ _out)
from .ops.functions_more import (cdist, diff, frac, frac_, index_copy,  # noqa: E402
                                 index_fill, kron, logaddexp, logaddexp2, masked_scatter,
                                 nanmean, nanquantile, nansum, quantile, rot90, std_mean,
                                 take, trapezoid, trapz, var_mean)
from .ops.functions_misc import (bucketize, is_floating_point, isin,  # noqa: E402
                                 searchsorted, unique_consecutive)
from .threads import (get_num_interop_threads, get_num_threads,  # noqa: E402
                      set_num_interop_threads, set_num_threads)
from .deterministic import (are_deterministic_algorithms_enabled,  # noqa: E402
                            get_deterministic_debug_mode,
                            is_deterministic_algorithms_warn_only_enabled,
                            set_deterministic_debug_mode, use_deterministic_algorithms)
from .normal import normal  # noqa: E402
from .windows import (bartlett_window, blackman_window, hamming_window,  # noqa: E402
                      hann_window, kaiser_window)
from .creation_more import frombuffer, logspace, scalar_tensor  # noqa: E402
from .legacy import set_default_tensor_type  # noqa: E402
from .ops.functions_more2 import (copysign, deg2rad, exp2, fmax, fmin,  # noqa: E402
                                  heaviside, hypot, logit, rad2deg, signbit, sinc, xlogy)
from .ops.functions_more3 import (addbmm, addmv, addr, atleast_1d,  # noqa: E402
                                  atleast_2d, atleast_3d, baddbmm, block_diag, combinations,
                                  cosine_similarity, diagflat, dist, inner, pairwise_distance,
                                  renorm, split_with_sizes, tensordot, vdot)
from .ops.functions_more4 import aminmax, as_strided, cummax, cummin, scatter_reduce  # noqa: E402
from .ops.functions_more4 import resize_as_  # noqa: E402
from .ops.inplace_more2 import (addmv_, deg2rad_, exp2_, logit_, rad2deg_,  # noqa: E402
                                sinc_, xlogy_)
from .shapes import broadcast_shapes  # noqa: E402
