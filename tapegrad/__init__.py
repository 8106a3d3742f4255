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
from .ops.comparison import allclose, eq, equal, ge, greater, greater_equal, gt, isfinite, isinf, isnan, le, less, less_equal, lt, maximum, minimum, ne
from .ops.conversion import clone
from .ops.pointwise import abs, absolute, add, clamp, clip, cos, div, divide, exp, log, logical_and, logical_not, logical_or, logical_xor, mul, multiply, neg, negative, pow, relu, rsqrt, sigmoid, sign, sin, sqrt, sub, subtract, tanh, true_divide, where
from .ops.products import bmm, dot, matmul, mm
from .ops.reductions import amax, amin, argmax, argmin, log_softmax, logsumexp, max, mean, min, prod, softmax, std, sum, var
from .ops.shape import broadcast_to, expand, permute, reshape, swapaxes, swapdims, t, transpose
from .ops.pointwise import ceil, clamp_max, clamp_min, expm1, fix, floor, floor_divide, fmod, log1p, log2, log10, remainder, trunc
from .ops.products import outer
from .ops.reductions import all, any, cumsum
from .ops.pointwise import relu_
from .ops.pointwise import nan_to_num
from .ops.products import einsum, trace
from .ops.random import bernoulli
from .ops.reductions import bincount, histc, histogram, median, nanmedian
from .ops.shape import diag, diag_embed, diagonal, meshgrid
from .ops.special import erf, erfc, erfinv
from .ops.linalg import norm
from .ops.linalg import cross, det, inverse, logdet, slogdet
from .ops.linalg import svd
from .ops.shape import cat, chunk, concat, concatenate, flatten, flip, fliplr, flipud, hstack, moveaxis, movedim, narrow, repeat, roll, select, split, squeeze, stack, tensor_split, tril, triu, unbind, unflatten, unsqueeze, vstack
from .ops.indexing import argwhere, gather, index_add, index_put, index_put_, index_select, masked_fill, masked_select, nonzero, repeat_interleave, scatter, scatter_add, take_along_dim
from .ops.random import multinomial
from .ops.sorting import argsort, kthvalue, sort, topk, unique
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
from .ops.conversion import can_cast, promote_types, result_type
from .ops.pointwise import bitwise_and, bitwise_not, bitwise_or, bitwise_xor
from .ops.pointwise import reciprocal, square
from .out_functions import (amax, amin, argmax, argmin, argsort, gather,  # noqa: E402,F811
                            index_select, kthvalue, masked_select, max, median, min,
                            nanmedian, negative, reciprocal, relu, rsqrt, sign, sort,
                            square, std, topk, var)
# torch's in-place functions: torch.erf_(x) is x.erf_()
from .ops.pointwise import abs_, clamp_, clamp_max_, clamp_min_, cos_, exp_, fill_, log_, neg_, sigmoid_, sin_, sqrt_, rsqrt_, tanh_, zero_
from .ops.pointwise import ceil_, expm1_, floor_, log1p_, log2_, log10_, nan_to_num_, reciprocal_, round_, square_, trunc_
from .ops.special import erf_, erfc_
from .ops.pointwise import acos_, acosh_, arccos_, arccosh_, arcsin_, arcsinh_, arctan_, arctanh_, asin_, asinh_, atan_, atanh_, cosh_, sinh_, tan_
fix_, negative_, clip_ = trunc_, neg_, clamp_  # noqa: E305  torch's aliases
from .ops.comparison import isclose
from .ops.pointwise import addcdiv, addcmul, lerp
from .ops.products import addmm, mv
from .ops.reductions import count_nonzero
from .ops.shape import broadcast_tensors, ravel, tile
from . import return_types  # noqa: E402  torch.return_types: max, sort, topk, ... (+ _out)
from .ops.indexing import index_copy, index_fill, masked_scatter, take
from .ops.linalg import cdist
from .ops.pointwise import frac, frac_, logaddexp, logaddexp2
from .ops.products import kron
from .ops.reductions import diff, nanmean, nanquantile, nansum, quantile, std_mean, trapezoid, trapz, var_mean
from .ops.shape import rot90
from .ops.comparison import isin
from .ops.conversion import is_floating_point
from .ops.sorting import bucketize, searchsorted, unique_consecutive
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
from .ops.pointwise import copysign, deg2rad, exp2, fmax, fmin, heaviside, hypot, logit, rad2deg, signbit, sinc, xlogy
from .ops.indexing import combinations
from .ops.linalg import cosine_similarity, dist, pairwise_distance, renorm
from .ops.products import addbmm, addmv, addr, baddbmm, inner, tensordot, vdot
from .ops.shape import atleast_1d, atleast_2d, atleast_3d, block_diag, diagflat, split_with_sizes
from .ops.indexing import as_strided, scatter_reduce
from .ops.reductions import aminmax, cummax, cummin
from .ops.shape import resize_as_
from .ops.pointwise import deg2rad_, exp2_, logit_, rad2deg_, sinc_, xlogy_
from .ops.products import addmv_
from .shapes import broadcast_shapes  # noqa: E402
