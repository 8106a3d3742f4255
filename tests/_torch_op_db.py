"""PyTorch's own operator database (`op_db`) fed to tapegrad: the conformance machinery.

torch ships, inside its wheel, the database it tests itself with
(`torch.testing._internal.common_methods_invocations.op_db`): one `OpInfo` per op with
sample inputs, error inputs and the dtypes the op supports. This module finds each
entry's tapegrad counterpart, converts torch's samples to tapegrad tensors (same values,
same dtypes), calls both libraries and compares:
- forward: every sample in every dtype both support, values (torch.testing's default
  tolerance for the dtype, NaN equal to NaN), shapes and dtypes;
- backward: float64 samples of differentiable ops, one random cotangent per output,
  the gradients of every input that requires grad;
- error inputs: tapegrad raises where torch raises, with the same exception type.
tests/test_torch_op_db.py runs it under pytest; `python tests/_torch_op_db.py` prints the
table of the issue (counts per kind).
"""
import contextlib
import copy
import sys
import types
import warnings

import numpy as np
import torch
from torch.testing._internal.common_methods_invocations import op_db

import tapegrad as tg

# Importing torch's test databases calls torch.backends.disable_global_flags(): later
# tests in the same process (real programs setting torch.backends.cudnn.benchmark)
# would then raise. Allow the flags again.
torch.backends.flags_frozen.__globals__["__allow_nonbracketed_mutation_flag"] = True

# dtypes both libraries have (no complex, no bfloat16: out of scope, see docs)
DTYPES = {torch.float64: tg.float64, torch.float32: tg.float32, torch.float16: tg.float16,
          torch.int64: tg.int64, torch.int32: tg.int32, torch.int16: tg.int16,
          torch.int8: tg.int8, torch.uint8: tg.uint8, torch.bool: tg.bool}
# torch.testing.assert_close's defaults per dtype (rtol, atol)
TOLERANCES = {torch.float64: (1e-7, 1e-7), torch.float32: (1.3e-6, 1e-5),
              torch.float16: (1e-3, 1e-5)}
# Entries out of scope by design (docs/differences.md), whatever tapegrad has of that name:
# `x.bfloat16()` (NumPy has no bfloat16; Tensor.bfloat16 exists and refuses)
OUT_OF_SCOPE = {"bfloat16"}


class Unsupported(Exception):
    """A sample holds something tapegrad has no counterpart for (complex, sparse, ...)."""


def entry_id(op):
    return op.name + ("." + op.variant_test_name if op.variant_test_name else "")


def _lookup(path):
    obj = tg
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _torch_at(path):
    obj = torch
    for part in path.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def _rebind(fn):
    """torch's own wrapper of an entry (`lambda self, cond, other: torch.where(cond, self,
    other)`) with `torch` read as tapegrad: the same call, made on tapegrad."""
    g = dict(fn.__globals__)
    g["torch"] = tg
    g["wrapper_set_seed"] = lambda f, *a, **k: f(*a, **k)
    return types.FunctionType(fn.__code__, g, fn.__name__, fn.__defaults__, fn.__closure__)


# Entries whose outputs are random or uninitialized: the two libraries' generators
# differ, so only shapes and dtypes are compared, of the outputs and of the float64
# gradients (whose values are the random masks/slopes/windows); their values are tested
# by properties in the op database and the random-op tests, and the fractional max pools
# against torch with the same `_random_samples` (tests/test_nn_fractional_max_pool.py).
NO_VALUES = {"normal", "normal.in_place", "normal.number_mean", "randn", "randn_like",
             "rand_like", "randint", "randint_like", "multinomial", "bernoulli", "uniform",
             "cauchy", "exponential", "geometric", "log_normal", "nn.functional.dropout",
             "nn.functional.dropout2d", "nn.functional.dropout3d", "nn.functional.alpha_dropout",
             "nn.functional.feature_alpha_dropout.with_train", "nn.functional.rrelu",
             "nn.functional.fractional_max_pool2d", "nn.functional.fractional_max_pool3d",
             "empty", "empty_like", "new_empty", "empty_strided", "new_empty_strided",
             "empty_permuted"}


def _random_sample(op, s):
    """The sample's result is random: a NO_VALUES entry, or attention with dropout (its
    mask is drawn from the generator, which is not torch's)."""
    if entry_id(op) in NO_VALUES:
        return True
    if op.name == "nn.functional.scaled_dot_product_attention":
        return s.kwargs.get("dropout_p", 0.0) > 0
    if op.name == "nn.functional.multi_head_attention_forward":  # dropout_p: 10th argument
        p = s.args[9] if len(s.args) > 9 else s.kwargs.get("dropout_p", 0.0)
        return p > 0 and s.kwargs.get("training", True)
    return False


def tg_function(op):
    """The tapegrad callable for an OpInfo (called like `op.op`), or None."""
    name = op.name
    if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
        return None  # private torch ops (_softmax_backward_data, ...); dunders run below
    if op.op is not None and op.op is not _torch_at(name) and \
            getattr(op.op, "__name__", "") == "<lambda>":
        base = _lookup(name)
        last = name.split(".")[-1]
        if base is None and not hasattr(tg.Tensor, last) and not (
                op.inplace_variant is not None and hasattr(tg.Tensor, last + "_")):
            return None  # (the random fills' entries call Tensor.cauchy_ and the like)
        return _rebind(op.op)
    if name.startswith("__"):  # called unbound, as torch's entry calls it: Tensor.__radd__(2, t)
        return getattr(tg.Tensor, name, None)
    if op.op is None and op.method_variant is not None:
        meth = name
        return (lambda t, *a, **k: getattr(t, meth)(*a, **k)) if hasattr(tg.Tensor, meth) \
            else None
    fn = _lookup(name)
    if fn is not None and callable(fn):
        return fn
    if "." not in name and op.method_variant is not None and hasattr(tg.Tensor, name):
        return lambda t, *a, **k: getattr(t, name)(*a, **k)
    return None


# ---- conversion ---------------------------------------------------------------------
def _aliased(obj, storages):
    """obj's values as an array that shares memory with the arrays of the other tensors
    of the same torch storage (same strides and offset): error inputs test overlapping
    `out=` tensors (an expanded out, out=input, out=input[1:])."""
    st = obj.untyped_storage()
    key = st.data_ptr()
    if key not in storages:
        storages[key] = torch.tensor([], dtype=torch.uint8).set_(st).numpy().copy()
    buf = storages[key].view(obj.numpy().dtype)
    size = obj.element_size()
    return np.lib.stride_tricks.as_strided(
        buf[obj.storage_offset():], obj.shape, [s * size for s in obj.stride()])


def to_tg(obj, leaves, storages=None):
    """torch objects -> tapegrad objects (tensors by value and dtype; leaves that require
    grad are collected in `leaves` in order). With a `storages` dict, tensors that share
    memory in torch share it in tapegrad too."""
    if isinstance(obj, torch.Tensor):
        if obj.dtype not in DTYPES or obj.layout != torch.strided:
            raise Unsupported(f"dtype {obj.dtype} / layout {obj.layout}")
        if obj.dim() > 64:
            raise Unsupported("more than 64 dims (NumPy's limit)")
        if storages is not None and ("id", id(obj)) in storages:
            return storages["id", id(obj)][1]  # the same tensor twice (cat(..., out=x) of x)
        for seen, t in leaves:  # the same tensor passed twice is one leaf (its gradients add)
            if seen is obj:
                return t
        if storages is None or obj.requires_grad:
            arr = obj.detach().cpu().numpy().copy()
            n_store = obj.untyped_storage().nbytes() // obj.element_size()
            if obj.is_contiguous() and obj.numel() and n_store > obj.numel():
                # a contiguous part of a larger storage (base[5:15]): the same part of a copy of
                # the storage, so storage-reading ops (as_strided) see what torch's see
                store = torch.as_strided(obj.detach(), (n_store,), (1,), 0).numpy().copy()
                off = obj.storage_offset()
                arr = store[off:off + obj.numel()].reshape(tuple(obj.shape))
        else:
            arr = _aliased(obj.detach(), storages)
        t = tg.from_numpy(arr)
        if obj.requires_grad:
            t.requires_grad_(True)
            leaves.append((obj, t))
        if storages is not None:
            storages["id", id(obj)] = (obj, t)  # (obj kept alive: its id stays its own)
        return t
    if isinstance(obj, torch.dtype):
        if obj not in DTYPES:
            raise Unsupported(f"dtype {obj}")
        return DTYPES[obj]
    if isinstance(obj, torch.device):
        return str(obj)
    if isinstance(obj, torch.Size):
        return tuple(obj)
    if isinstance(obj, (torch.memory_format, torch.layout)):
        raise Unsupported(repr(obj))
    if isinstance(obj, torch.Generator):
        raise Unsupported("torch.Generator")
    if isinstance(obj, list):
        return [to_tg(o, leaves, storages) for o in obj]
    if isinstance(obj, tuple):
        return tuple(to_tg(o, leaves, storages) for o in obj)
    if isinstance(obj, dict):
        return {k: to_tg(v, leaves, storages) for k, v in obj.items()}
    if callable(obj) and not isinstance(obj, type):
        raise Unsupported("a callable argument")
    return obj


def flat_outputs(out):
    """A result as a list of leaves (tensors, numbers, bools, None), tuples flattened."""
    if isinstance(out, (tuple, list)):
        return [x for o in out for x in flat_outputs(o)]
    return [out]


def _dtype_name(t):
    return str(t.dtype).replace("torch.", "").replace("tapegrad.", "")


def compare(tg_out, torch_out, dtype, values=True):
    """None when tapegrad's result matches torch's, else a short reason (values=False:
    shapes and dtypes only)."""
    a, b = flat_outputs(tg_out), flat_outputs(torch_out)
    if len(a) != len(b):
        return f"{len(a)} outputs, torch {len(b)}"
    rtol, atol = TOLERANCES.get(dtype, (0, 0))
    for i, (x, y) in enumerate(zip(a, b)):
        if isinstance(y, torch.Tensor):
            if not isinstance(x, (tg.Tensor, torch.Tensor)):
                return f"output {i}: {type(x).__name__}, torch a tensor"
            if tuple(x.shape) != tuple(y.shape):
                return f"output {i}: shape {tuple(x.shape)}, torch {tuple(y.shape)}"
            if _dtype_name(x) != _dtype_name(y):
                return f"output {i}: dtype {_dtype_name(x)}, torch {_dtype_name(y)}"
            if y.dtype not in DTYPES:
                return f"output {i}: torch dtype {y.dtype}"
            if not values:
                continue
            xa = x.detach().numpy()
            ya = y.detach().cpu().numpy(force=True)  # a ZeroTensor gradient too
            if ya.dtype.kind in "fc":
                rt, at = TOLERANCES.get(y.dtype, (rtol, atol))
                if not np.allclose(xa, ya, rtol=rt, atol=at, equal_nan=True):
                    with np.errstate(all="ignore"):
                        err = np.nanmax(np.abs(xa.astype(float) - ya.astype(float))) \
                            if xa.size else 0
                    return f"output {i}: values differ (max abs diff {err:.3g})"
            elif not np.array_equal(xa, ya):
                return f"output {i}: values differ"
        elif isinstance(y, (bool, int, float)) and not isinstance(y, torch.Tensor):
            xv = x.item() if isinstance(x, tg.Tensor) else x
            if isinstance(y, float) and isinstance(xv, (int, float)):
                if not (np.isclose(xv, y, rtol=1e-7, atol=1e-7, equal_nan=True)):
                    return f"output {i}: {xv!r}, torch {y!r}"
            elif xv != y:
                return f"output {i}: {xv!r}, torch {y!r}"
    return None


def _as_torch(out):
    if isinstance(out, tg.Tensor):
        return torch.from_numpy(out.detach().numpy().copy())
    if isinstance(out, (tuple, list)):
        return type(out)(_as_torch(o) for o in out) if not hasattr(out, "_fields") \
            else tuple(_as_torch(o) for o in out)
    return out


def _is_identity(fn):
    return getattr(fn, "__name__", "") == "<lambda>" and \
        fn.__code__.co_code == (lambda x: x).__code__.co_code


def _processed(sample, got, expected):
    """torch's `output_process_fn_grad` (e.g. svd's signs made unique) applied to both
    results, tapegrad's first converted to torch tensors."""
    fn = sample.output_process_fn_grad
    if _is_identity(fn):
        return got, expected
    try:
        return fn(_as_torch(got)), fn(expected)
    except Exception:
        return got, expected


# ---- one entry --------------------------------------------------------------------
def _dtypes(op):
    return [d for d in DTYPES if d in op.supported_dtypes("cpu")]


@contextlib.contextmanager
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            yield


def _call(fn, sample, leaves, storages=None):
    inp = to_tg(sample.input, leaves, storages)
    args = to_tg(tuple(sample.args), leaves, storages)
    kwargs = to_tg(dict(sample.kwargs), leaves, storages)
    return fn(inp, *args, **kwargs)


def run_forward(op, fn, dtype, limit=None):
    """[(sample index, reason or None)] for the entry's samples in `dtype`."""
    results = []
    torch.manual_seed(0)
    try:
        samples = list(op.sample_inputs("cpu", dtype, requires_grad=False))
    except Exception as e:  # torch cannot make samples here (missing scipy, ...)
        return [(-1, f"sample generation: {type(e).__name__}")]
    for i, s in enumerate(samples[:limit]):
        try:
            with _quiet():
                expected = op(s.input, *s.args, **s.kwargs)
        except Exception:
            continue  # torch itself refuses this sample on the CPU: not a case
        try:
            with _quiet():
                got = _call(fn, s, [])
        except Unsupported:
            continue
        except Exception as e:
            results.append((i, f"raised {type(e).__name__}: {str(e)[:120]}"))
            continue
        got, expected = _processed(s, got, expected)
        results.append((i, compare(got, expected, dtype, not _random_sample(op, s))))
    return results


def run_backward(op, fn, limit=None):
    """[(sample index, reason or None)] for float64 gradients w.r.t. every input."""
    results = []
    if not op.supports_autograd or torch.float64 not in op.supported_dtypes("cpu"):
        return results
    torch.manual_seed(0)
    try:
        samples = list(op.sample_inputs("cpu", torch.float64, requires_grad=True))
    except Exception as e:
        return [(-1, f"sample generation: {type(e).__name__}")]
    for i, s in enumerate(samples[:limit]):
        try:
            with _quiet():
                out = s.output_process_fn_grad(op(s.input, *s.args, **s.kwargs))
        except Exception:
            continue
        outs = [o for o in flat_outputs(out)
                if isinstance(o, torch.Tensor) and o.requires_grad and o.dtype.is_floating_point]
        if not outs:
            continue
        leaves = []
        try:
            with _quiet():
                got = _call(fn, s, leaves)
        except Unsupported:
            continue
        except Exception as e:
            results.append((i, f"forward raised {type(e).__name__}: {str(e)[:100]}"))
            continue
        if not _is_identity(s.output_process_fn_grad):
            try:  # the same processing, made on tapegrad (torch read as tapegrad)
                with _quiet():
                    got = _rebind(s.output_process_fn_grad)(got)
            except Exception:
                continue
        t_inputs = [t for t, _ in leaves]
        g_outs = [o for o, y in zip(flat_outputs(got), flat_outputs(out))
                  if isinstance(y, torch.Tensor) and y.requires_grad
                  and y.dtype.is_floating_point]
        if len(g_outs) != len(outs) or not t_inputs:
            results.append((i, "outputs differ in number"))
            continue
        gen = torch.Generator().manual_seed(i)
        cots = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o in outs]
        with _quiet():
            expected = torch.autograd.grad(outs, t_inputs, cots, allow_unused=True)
        try:
            with _quiet():
                actual = tg.autograd.grad(
                    [o for o in g_outs], [t for _, t in leaves],
                    [tg.from_numpy(c.numpy().copy()) for c in cots], allow_unused=True)
        except Exception as e:
            results.append((i, f"backward raised {type(e).__name__}: {str(e)[:100]}"))
            continue
        reason = None
        for k, (a, b) in enumerate(zip(actual, expected)):
            if b is None and a is None:
                continue
            if b is None:
                b = torch.zeros_like(t_inputs[k])
            if a is None:
                a = tg.zeros(tuple(b.shape), dtype=tg.float64)
            r = compare(a, b, torch.float64, not _random_sample(op, s))
            if r:
                reason = f"grad of input {k}: {r}"
                break
        results.append((i, reason))
    return results


def _torch_accepts(op, s):
    """Whether torch runs the error input `s` without raising: torch's test_errors is an
    expected failure there (`torch.clamp_max(t, 2)` is fine although the entry says python
    scalars are not), so tapegrad must accept it too and is not asked to raise."""
    try:
        # on a copy (views kept): an accepted out= would resize the sample's tensors
        inp, args, kwargs = copy.deepcopy((s.input, s.args, s.kwargs))
        with _quiet():
            op(inp, *args, **kwargs)
    except Exception:
        return False
    return True


def run_errors(op, fn):
    """[(index, reason or None)]: each error input must raise torch's exception type."""
    results = []
    if op.error_inputs_func is None:
        return results
    try:
        errors = list(op.error_inputs("cpu"))
    except Exception as e:
        return [(-1, f"error input generation: {type(e).__name__}")]
    for i, e in enumerate(errors):
        s = e.sample_input
        if _torch_accepts(op, s):
            continue  # torch's own test_errors expects this one to fail (clamp_max(t, 2))
        try:
            with _quiet():
                _call(fn, s, [], {})
        except Unsupported:
            continue
        except Exception as err:
            ok = isinstance(err, e.error_type) if isinstance(e.error_type, type) else True
            results.append((i, None if ok else
                            f"raised {type(err).__name__}, torch {e.error_type.__name__}"))
            continue
        results.append((i, f"did not raise (torch: {getattr(e.error_type, '__name__', e.error_type)})"))
    return results


def entries():
    """[(OpInfo, tapegrad callable or None)] for every op_db entry."""
    return [(op, None if op.name in OUT_OF_SCOPE else tg_function(op)) for op in op_db]


def main(argv):
    """Print the conformance table (and the failing samples with -v)."""
    verbose = "-v" in argv
    names = [a for a in argv if not a.startswith("-")]
    counts = dict(fwd=[0, 0], bwd=[0, 0], err=[0, 0])
    have, missing, passing = 0, [], 0
    for op, fn in entries():
        if names and entry_id(op) not in names and op.name not in names:
            continue
        if fn is None:
            missing.append(entry_id(op))
            continue
        have += 1
        bad = []
        for d in _dtypes(op):
            for i, r in run_forward(op, fn, d):
                counts["fwd"][1] += 1
                counts["fwd"][0] += r is None
                if r:
                    bad.append(f"fwd {d} #{i}: {r}")
        for i, r in run_backward(op, fn):
            counts["bwd"][1] += 1
            counts["bwd"][0] += r is None
            if r:
                bad.append(f"bwd #{i}: {r}")
        for i, r in run_errors(op, fn):
            counts["err"][1] += 1
            counts["err"][0] += r is None
            if r:
                bad.append(f"err #{i}: {r}")
        passing += not bad
        if bad:
            print(f"FAIL {entry_id(op)}: {len(bad)} ({bad[0]})", flush=True)
            if verbose:
                for b in bad[1:]:
                    print("     ", b)
    print(f"entries with a tapegrad counterpart: {have}; missing: {len(missing)}")
    for k, (ok, n) in counts.items():
        print(f"{k}: {ok} / {n} ({100 * ok / max(n, 1):.1f}%)")
    print(f"entries passing every sample: {passing} / {have}")
    if verbose:
        print("missing:", " ".join(missing))


if __name__ == "__main__":
    main(sys.argv[1:])
