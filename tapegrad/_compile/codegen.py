"""A Plan (replay.py) as ONE generated straight-line Python function: the replay.

`generate(plan)` writes the steps out as source, one line or a few per step, every slot
a local variable `v<slot>`, every constant a name bound in the function's namespace:

    v7 = embedding_2(v6, v0)                      # an op's forward, as apply() runs it
    v11, v12 = batch_norm_5(...)                  # (an op with values saved for its rules)
    batch_norm_running_6(v13, v14, v11)           # a host step: running statistics
    zero_grad_9(*A9, **W9)                        # a call step: run as it is
    g18 = one(v21)                                # a backward step: the seed, then each
    g17 = cross_entropy_18_0(np, g18, v21, ...)   #   captured rule in the watched order,
    L[e4] = ...                                   #   each leaf's total as the walk sums it
    accumulate_all(L, False, (), False)           #   and the engine's own hand-off

The generated function is what the replay runs (no per-step dispatch), and what
`compiled.explain()` prints: a learner's whole training step, forward and backward, as
the kernel calls it makes.
"""
import re

import numpy as np

from ..core import opmath as _opmath
from ..core.backward import _one
from ..core.engine import _fit as _fit_leaf, accumulate, accumulate_all, sum_to
from ..core.grad_attribute import SLOT
from ..core.tensor_base import make
from ..core.record import in_compute_dtype, keep_default_dtype
from ..ops.registry import OPS
from . import emit as _emit
from . import inline as _inline
from . import inplace as _inplace
from .capture import BACKWARD, CALL, CONST, EXT, HOST, OP, Const, ItemOf

_ndarray = np.ndarray
_float32 = np.dtype("float32")
_float16 = np.dtype("float16")


def _narrow_extra(out):
    """An op with saved values, float16: its result rounded, the saved values as they are
    (core/record.py apply)."""
    return _opmath.narrow(out[0]), out[1]


def _fit(gi, shape, dtype):
    """engine._fit for NumPy arrays: summed back to the input's shape, cast to its dtype."""
    if tuple(gi.shape) != shape:
        gi = sum_to(np, gi, shape)
    if gi.dtype != dtype:
        gi = gi.astype(dtype)
    return gi


class _Writer:
    def __init__(self, plan):
        self.plan = plan
        self.ns = {"np": np, "ndarray": _ndarray, "F32": _float32, "one": _one,
                   "fit_leaf": _fit_leaf, "accumulate_all": accumulate_all,
                   "keep_default_dtype": keep_default_dtype, "in_compute_dtype": in_compute_dtype, "asarray": np.asarray,
                   "fit": _fit, "accumulate": accumulate, "widen": _opmath.widen,
                   "narrow": _opmath.narrow, "narrow_extra": _narrow_extra,
                   "widen_rule": _opmath.widen_rule, "gget": SLOT.__get__,
                   "gset": SLOT.__set__, "make": make, "sum_to_fwd": OPS["sum_over_axes"].forward, **_emit.NS,
                   **_inline.NS, **_emit.kernels()}
        self.lines = []
        self.exprs = {}  # step j -> (args expression, kw expression) for its rules
        self.meta = plan.meta  # slot -> (shape, dtype) as captured (None: no array)
        self.fast = {}  # step j -> the metas of its inputs: emitted by emit.py
        # variable -> (shape, dtype) when known: the slots' as captured, the gradients'
        # (a rule's result, fitted to its input's): inplace.py's shape and dtype test
        self.names = {f"v{k}": m for k, m in enumerate(plan.meta) if m is not None}

    def known(self, name, shape, dtype):
        """`name` holds (shape, dtype) wherever it is bound (two bindings that differ:
        not known)."""
        if _NAME.fullmatch(name):
            m = (tuple(shape), dtype)
            self.names[name] = m if self.names.get(name, m) == m else None

    def bind(self, name, value):
        self.ns[name] = value
        return name

    def ref(self, r, j, k):
        """The expression of an argument: a slot's variable, a bound constant, a tuple."""
        if type(r) is int:
            return f"v{r}"
        if type(r) is Const:
            v = r.value
            if v is None or type(v) in (bool, int) or (type(v) is float and v == v
                                                       and v not in (float("inf"),
                                                                     float("-inf"))):
                return repr(v)
            return self.bind(f"c{j}_{k}", v)
        items = ", ".join(self.ref(x, j, f"{k}_{n}") for n, x in enumerate(r.items))
        if r.kind is tuple:
            return f"({items},)" if r.items else "()"
        if r.kind is list:
            return f"[{items}]"
        return f"{self.bind(f'S{j}_{k}', r.kind)}([{items}])"

    def emit(self, line):
        self.lines.append("    " + line)


def _name(fn, j):
    n = getattr(fn, "name", None) or getattr(fn, "__name__", "fn")
    n = "".join(ch if ch.isalnum() else "_" for ch in n)
    return f"{n}_{j}"


def generate(plan, keep=()):
    """(source, function): the function takes the list of external tensors (the call's)
    and returns ({slot: array} of the outputs, kept), kept being {step: (arrays, kw, ans)}
    for the steps in `keep` (a compiled node's rules); (None, None) before doing anything
    when a tensor read as a global no longer has its captured shape, dtype or
    requires_grad (`Plan.late_ok`)."""
    w = _Writer(plan)
    emit = w.emit
    # the tensors the call reads that are no argument (parameters read as globals), read
    # first: still of the captured shape, dtype and requires_grad, or no replay (None)
    ext_slot = {id(st.fn): st.index for st in plan.steps if st.kind == EXT}
    early = set()
    for n, (t, (shape, dtype, rg)) in enumerate(zip(plan.late, plan.late_meta)):
        tn = w.bind(f"LT{n}", t)
        k = ext_slot.get(id(t))
        if k is None or k in early:
            a = f"{tn}._data"
        else:
            early.add(k)
            a = f"v{k}"
            emit(f"v{k} = {tn}._data")
        emit(f"if {a}.shape != {w.bind(f'LS{n}', shape)} or {a}.dtype != "
             f"{w.bind(f'LD{n}', dtype)} or {tn}._rg != {rg}: return None, None")
    for n, (t, present) in enumerate(plan.grads_found):  # (.grad as the call found it)
        emit(f"if (gget({w.bind(f'GF{n}', t)}) is None) == {present}: return None, None")
    for k in range(plan.n_ext):
        emit(f"v{k} = ext[{k}]._data")
    if keep:
        emit("kept = {}")
    hosts = _emit.host_table()
    for j, st in enumerate(plan.steps):
        kind = st.kind
        idx = st.index
        if kind == CONST:
            emit(f"v{idx} = {w.bind(f'C{j}', st.fn)}.copy()")
        elif kind == EXT and idx in early:
            continue
        elif kind == EXT:
            emit(f"v{idx} = {w.bind(f'T{j}', st.fn)}._data")
        elif kind == CALL and _inline.call(w, j, st):
            pass  # written out (inline.py: zero_grad, a plain SGD step)
        elif kind == CALL:
            fn = w.bind(_name(st.fn, j), st.fn)
            a = w.bind(f"A{j}", st.ins)
            kw = w.bind(f"W{j}", st.kw)
            emit(f"{fn}(*{a}, **{kw})")
        elif kind == HOST and _host(w, j, st, hosts):
            pass
        elif kind == HOST:
            fn = w.bind(_name(st.fn, j), st.fn)
            args = ", ".join(w.ref(r, j, i) for i, r in enumerate(st.ins))
            outs = ", ".join(f"v{idx + n}" for n in range(st.n_out))
            call = f"{fn}({args})"
            if st.n_out == 1:
                emit(f"v{idx} = {call}")
            elif st.n_out:
                emit(f"{outs}, = {call}")
            else:
                emit(call)
        elif kind == OP:
            _op(w, j, st, keep)
        elif kind == BACKWARD:
            _backward(w, st)
    outs = sorted({s if type(s) is int else s.slot for s in plan.outputs
                   if type(s) in (int, ItemOf)})  # (ItemOf: a returned .item()'s array)
    emit("return {" + ", ".join(f"{s}: v{s}" for s in outs) + "}, "
         + ("kept" if keep else "{}"))
    src = "def replay(ext):\n" + "\n".join(_free(_inplace.rewrite(w.lines, w.names))) + "\n"
    code = compile(src, "<tg.compile replay>", "exec")
    exec(code, w.ns)
    return src, w.ns["replay"]


_NAME = re.compile(r"[dxgl]\d+(?:_\d+)?")
_VAR = re.compile(r"\b(?:[vdxglto]\d+(?:_\d+)?|kws?\d+|gl\d+|ans\d+|G|sv|a)\b")


def _code(line):
    """A generated line without its comment (a whole-line one, or the trailing `  # ...`
    the emitters write: its words are no variables: "a", "d1" in prose)."""
    if line.lstrip().startswith("#"):
        return ""
    return line.split("  # ", 1)[0]


def _free(lines):
    """Each variable deleted right after its last use, as eager's walk frees each node's
    arrays once its rules ran: the step's memory stays that of eager (and freed blocks
    are reused by the next kernels, warm in the cache)."""
    last = {}
    names = [_VAR.findall(_code(line)) for line in lines]
    for i, found in enumerate(names):
        for name in found:
            last[name] = i
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        body = line.lstrip()
        if body.startswith(("return", "#", "else", "elif")) or body.endswith(":"):
            continue  # (no statement may follow a block's header or split an if/else)
        if i + 1 < len(lines) and lines[i + 1].lstrip().startswith(("else", "elif")):
            continue
        dead = sorted({n for n in names[i] if last[n] == i})
        if dead:
            out.append(line[:len(line) - len(body)] + "del " + ", ".join(dead))
    return out


def _host(w, j, st, hosts):
    """A host step of emit.py's table, written out (True), or not (False)."""
    f = hosts.get(st.fn)
    if f is None or st.n_out or not all(type(r) in (int, Const) for r in st.ins):
        return False
    lines = f([f"v{r}" if type(r) is int else r.value for r in st.ins])
    if lines is None:
        return False
    w.emit(f"# {st.fn.__name__.lstrip('_')}")
    for line in lines:
        w.emit(line.format(t=f"t{j}"))
    return True


def _fast_op(w, j, st, keep):
    """An op of emit.FORWARD whose decisions are all known: its expression."""
    op = st.fn
    f = _emit.FORWARD.get(op.name)
    saves = op.name in _emit.SAVES
    if (f is None or st.n_out != 1 or ((st.saved_keys or op.has_extra) and not saves)
            or not all(type(r) is int or (type(r) is Const and r.value is None)
                       for r in st.ins)
            or not all(type(r) is Const for r in st.kw.values())):
        return False
    metas = [w.meta[r] if type(r) is int else None for r in st.ins]
    n_float = _emit.MIXED.get(op.name, len(metas))
    if (_emit.float_metas([m for r, m in zip(st.ins[:n_float], metas) if type(r) is int])
            is None or w.meta[st.index] is None):
        return False
    kw = {k: r.value for k, r in st.kw.items()}
    args = [f"v{r}" if type(r) is int else "None" for r in st.ins]
    lines = f(args, kw, metas)
    if lines is None:
        return False
    names = {"o": f"v{st.index}", "t": f"t{j}"}
    kw_s = w.bind(f"K{j}", kw) if kw else "{}"
    consts = {}
    if type(lines) is tuple:  # (lines, constants the lines name)
        lines, consts = lines
        for k, v in consts.items():
            consts[k] = w.bind(f"{k}{j}", v)
    names.update(consts, K=kw_s)
    names.update((key, f"v{st.index + 1 + n}") for n, key in enumerate(st.saved_keys))
    if saves and set(st.saved_keys) != set(_emit.SAVES[op.name]):
        return False
    w.emit(f"# {op.name}")
    for line in lines:
        w.emit(line.format(**names))
    if saves and j in keep:  # the node's rules read the saved values with the arguments
        w.emit(f"kws{j} = {{**{kw_s}, " + ", ".join(f"{k!r}: {names[k]}"
                                                  for k in st.saved_keys) + "}")
        kw_s = f"kws{j}"
    w.exprs[j] = (args, kw_s, f"v{st.index}")
    w.fast[j] = (metas, kw, {k: names[k] for k in st.saved_keys}, consts, kw_s)
    if j in keep:
        w.emit(f"kept[{j}] = (({', '.join(args)},), {kw_s}, v{st.index})")
    return True


def _op(w, j, st, keep):
    if _fast_op(w, j, st, keep):
        return
    emit = w.emit
    op = st.fn
    fn = w.bind(_name(op, j), op.forward)
    idx = st.index
    args = [w.ref(r, j, i) for i, r in enumerate(st.ins)]
    args_s = ", ".join(args)
    if st.kw:
        if all(type(r) is Const for r in st.kw.values()):
            kw_s = w.bind(f"K{j}", {k: r.value for k, r in st.kw.items()})
        else:
            kw_s = f"kw{j}"
            emit(f"kw{j} = {{" + ", ".join(f"{k!r}: {w.ref(r, j, k)}"
                                           for k, r in st.kw.items()) + "}")
    else:
        kw_s = None
    arr_s = f"({args_s},)" if args else "()"
    fwd_s = args_s
    if st.widened:  # float16 computed in float32 and rounded once (core/opmath.py)
        emit(f"c{j} = widen([{args_s}])")
        fwd_s = f"*c{j}"
    elif op.ints_to_float and args:  # as core/record.py apply(): integer inputs computed
        emit(f"c{j} = in_compute_dtype([{args_s}])")  # in the default dtype
        fwd_s = f"*c{j}"
    call = f"{fn}({fwd_s}{', ' if args else ''}**{kw_s})" if kw_s else f"{fn}({fwd_s})"
    if st.widened:
        call = (f"narrow_extra({call})" if op.has_extra else f"narrow({call})")
        fwd_s = args_s  # (keep_default_dtype below reads the given arrays)
    if st.n_out != 1:  # the pieces of a split
        outs = ", ".join(f"v{idx + n}" for n in range(st.n_out))
        emit(f"{outs}, = ans{j} = tuple({call})")
        ans = f"ans{j}"
        saved_kw = kw_s or "{}"
    else:
        extra = op.has_extra
        emit(f"a = {call}")
        if extra:
            emit("a, sv = a")
        elif op.promote_default:
            emit("sv = None")
        emit("if type(a) is not ndarray: a = asarray(a)")
        if op.promote_default:
            cast_s = f"c{j}" if fwd_s != args_s else arr_s
            emit(f"if a.dtype is not F32: a = keep_default_dtype(a, {cast_s})")
        emit(f"v{idx} = a")
        for n, key in enumerate(st.saved_keys):
            emit(f"v{idx + 1 + n} = sv[{key!r}]")
        ans = f"v{idx}"
        if st.saved_keys:
            emit(f"kws{j} = {{**{kw_s or '{}'}, **sv}}")
            saved_kw = f"kws{j}"
        else:
            saved_kw = kw_s or "{}"
    w.exprs[j] = (args, saved_kw, ans)
    if j in keep:
        emit(f"kept[{j}] = ({arr_s}, {saved_kw}, {ans})")


def _fitted(w, n, x, meta, shape, dtype):
    """The expression of gradient `x` fitted to (shape, dtype), as the engine's `_fit`:
    nothing when its (shape, dtype) is known and right (an emitted rule's), the sum or
    cast itself when known and wrong, the check at run time when not known."""
    if meta is not None:
        if tuple(meta[0]) == tuple(shape) and meta[1] == dtype:
            w.known(x, shape, dtype)
            return x
        w.emit(f"x{n} = fit({x}, {w.bind(f'sh{n}', tuple(shape))}, {w.bind(f'dt{n}', dtype)})")
        w.known(f"x{n}", shape, dtype)
        return f"x{n}"
    sh = w.bind(f"sh{n}", tuple(shape))
    dt = w.bind(f"dt{n}", dtype)
    w.emit(f"x{n} = {x}")
    w.emit(f"if x{n}.shape != {sh} or x{n}.dtype != {dt}: x{n} = fit(x{n}, {sh}, {dt})")
    w.known(f"x{n}", shape, dtype)
    return f"x{n}"


def _rules(w, j, s, evs, gj):
    """The lines of step j's rules for the inputs in `evs`: {input: (expression, its
    (shape, dtype) when known)}."""
    emit = w.emit
    args, kw_s, ans = w.exprs[j]
    op = s.fn
    emit(f"# {op.name}'s rule")
    fast = w.fast.get(j)
    if fast is not None and op.name == "cross_entropy":
        metas, kw, saved, consts, kw_s0 = fast
        for line in _emit.ce_rule(gj, ans, args, saved):
            emit(line.format(d=f"d{j}_0", K=kw_s0, **consts))
        return {0: (f"d{j}_0", metas[0] + (False,))}
    if fast is not None and op.name == "layer_norm":
        metas, kw, saved = fast[:3]
        names = {}
        for i, _ in evs:
            if i not in names:
                lines, meta = _emit.ln_rule(i, gj, args, kw, metas, saved)
                for line in lines:
                    emit(line.format(d=f"d{j}_{i}"))
                names[i] = (f"d{j}_{i}", meta)
        return names
    if fast is not None and op.name == "gelu":
        metas, kw, saved = fast[:3]
        for line in _emit.gelu_rule(gj, saved):
            emit(line.format(d=f"d{j}_0"))
        return {0: (f"d{j}_0", metas[0] + (True,))}
    if fast is not None and op.name == "batch_norm":  # its fused rule, all three at once
        metas, kw, saved = fast[:3]
        ns = {"t": f"t{j}", "dx": f"d{j}_0", "dw": f"d{j}_1", "db": f"d{j}_2"}
        for line in _emit.bn_rule(gj, args, kw, metas, saved):
            emit(line.format(**ns))
        return {0: (f"d{j}_0", metas[0] + (True,)), 1: (f"d{j}_1", metas[1] + (False,)),
                2: (f"d{j}_2", metas[2] + (False,))}
    vjp = _emit.VJP.get(op.name) if fast is not None else None
    if vjp is not None:
        metas, kw = fast[:2]
        got = {}
        for i, _ in evs:
            if i not in got:
                got[i] = vjp(i, gj, ans, args, kw, metas, w.meta[s.index])
                if got[i] is None:
                    break
        else:
            names = {}
            for i, (lines, meta) in got.items():
                alias = _NAME.fullmatch(lines[0][6:]) if len(lines) == 1 else None
                if alias and lines[0].startswith("{o} = "):  # g itself (add's rule)
                    names[i] = (lines[0][6:], meta)
                    continue
                for line in lines:
                    emit(line.format(o=f"d{j}_{i}"))
                names[i] = (f"d{j}_{i}", meta)
            return names
    rest = "".join(", " + a for a in args) + ("" if kw_s == "{}" else f", **{kw_s}")
    m = w.meta[s.index]
    if s.n_out == 1 and op.opmath and m is not None and m[1] == _float16:
        # float16: the rules run in float32 (the engine's widen_rule); fit rounds back
        emit(f"o{j} = widen_rule({gj}, {ans}, {kw_s}, [{', '.join(args)}])")
        gj, ans, rest = f"o{j}[0]", f"o{j}[1]", f", *o{j}[3], **o{j}[2]"
    names = {}
    if op.backward is not None:
        b = w.bind(f"bw{j}", op.backward)
        emit(f"G = {b}(np, {gj}, {ans}{rest})")
        for i, _ in evs:
            names.setdefault(i, (f"G[{i}]", None))
    else:
        for i, _ in evs:
            if i in names:
                continue
            r = w.bind(f"{_name(op, j)}_{i}", op.vjps[i])
            names[i] = (f"d{j}_{i}", None)
            emit(f"d{j}_{i} = {r}(np, {gj}, {ans}{rest})")
    return names


def _backward(w, st):
    """A backward step: the walk unrolled. Each gradient is a variable; a tensor's
    contributions are added in the order the captured walk added them; each leaf's
    total is handed to its `.grad` as the engine's accumulate_all does."""
    emit = w.emit
    plan = w.plan
    sch = st.fn
    root = st.ins[0]
    j0 = next(j for j, s in enumerate(plan.steps)
              if s.index <= root < s.index + s.n_out)
    have = {}  # (step, piece) -> variable holding its gradient so far
    have[(j0, 0)] = f"g{j0}"
    emit(f"# backward of v{root}")
    if w.meta[root] is not None:  # the shared read-only seed of this shape and dtype
        emit(f"g{j0} = {w.bind(f'ONE{j0}', _one(np.empty(*w.meta[root])))}")
    else:
        emit(f"g{j0} = one(v{root})")
    leaves = {}  # external number -> (tensor expression, variable of its total)
    late = plan.late
    n = 0
    for j, evs in sch.order:
        s = plan.steps[j]
        if s.n_out == 1:
            if (j, 0) not in have:
                continue
            gj = have[(j, 0)]
        else:
            pieces = [have.get((j, p)) for p in range(s.n_out)]
            if not any(pieces):
                continue
            gj = f"gl{j}"
            emit(f"{gj} = [{', '.join(p or 'None' for p in pieces)}]")
        names = _rules(w, j, s, evs, gj)
        for i, tgt in evs:
            n += 1
            x, meta = names[i]
            if meta is not None:
                w.known(x, meta[0], meta[1])
            if tgt[0] == "e":
                k = sch.entries[tgt[1]]
                if k >= plan.n_ext:
                    t = late[k - plan.n_ext]
                    shape, dtype = t._data.shape, t._data.dtype  # (late_ok checks them)
                else:
                    shape, dtype = w.meta[k]  # (the guards check them)
                x = _fitted(w, n, x, meta, shape, dtype)
                if plan.dup_ext:  # an input given twice: summed per tensor, as the engine
                    tv = w.bind(f"E{k}", late[k - plan.n_ext]) if k >= plan.n_ext \
                        else f"ext[{k}]"
                    if not leaves:
                        emit("L = {}")
                    leaves[k] = None
                    emit(f"L[{tv}] = L[{tv}] + {x} if {tv} in L else {x}")
                elif k not in leaves:
                    tv = w.bind(f"E{k}", late[k - plan.n_ext]) if k >= plan.n_ext \
                        else f"ext[{k}]"
                    fresh = meta is not None and (meta[2] and x == names[i][0]
                                                  or _fit_is_new(x, meta, shape, dtype))
                    if _NAME.fullmatch(x):
                        leaves[k] = [tv, x, fresh]  # (a variable: no copy of the name)
                    else:
                        leaves[k] = [tv, f"l{n}", fresh]
                        emit(f"l{n} = {x}")
                else:
                    var = leaves[k][1]
                    w.known(var, shape, dtype)
                    emit(f"{var} = {var} + {x}")
                    leaves[k][2] = True  # a sum: a new array
                continue
            _, jj, piece, slot, shape, dtype = tgt
            x = _fitted(w, n, x, meta, shape, dtype)
            var = have.get((jj, piece))
            if var is None:
                if _NAME.fullmatch(x):
                    have[(jj, piece)] = x  # (a variable: its name goes on)
                    continue
                have[(jj, piece)] = var = f"g{jj}" if plan.steps[jj].n_out == 1 else \
                    f"g{jj}_{piece}"
                emit(f"{var} = {x}")
            else:
                w.known(var, shape, dtype)
                emit(f"{var} = {var} + {x}")
    if plan.dup_ext:
        if leaves:
            emit("accumulate_all(L, False, (), False)")
            emit("L = None")
        return
    _hand_off(w, list(leaves.values()))


def _fit_is_new(x, meta, shape, dtype):
    """`x` is _fitted's `fit` of a gradient of known (shape, dtype) `meta` to (shape,
    dtype) that makes a new array: engine.sum_to's reduction (axes added or stretched by
    broadcasting) or the cast (a bias's gradient summed over the batch); not a reshape."""
    if not x.startswith("x") or meta is None:
        return False
    gs, shape = tuple(meta[0]), tuple(shape)
    if gs == shape:
        return meta[1] != dtype  # (astype: a copy)
    lead = len(gs) - len(shape)
    return lead > 0 or (lead == 0 and any(s == 1 and gs[q] != 1 for q, s in enumerate(shape)))


def _hand_off(w, leaves):
    """accumulate_all written out: a fresh total becomes the leaf's `.grad` (stolen),
    anything else goes through the engine's `accumulate`. An array that reached two
    leaves (add's rule passes g on to both) is copied by the engine: then its own call."""
    emit = w.emit
    if not leaves:
        return
    emit("# each leaf's total into its .grad (the engine's hand-off: a fresh array "
         "becomes .grad)")
    pad = ""
    # fresh totals (an emitted rule's new array, a sum) are distinct arrays of their own,
    # held by their variable only (each input's gradient goes to one target): no check
    # of identity or ownership is needed for them; the others may be one array twice
    check = [v for _, v, f in leaves if not f]
    if len({v for _, v, _ in leaves}) != len(leaves):
        check = [v for _, v, _ in leaves]  # (one variable for two leaves: the engine's)
    if len(check) > 1:
        pad = "    "
        ids = ", ".join(f"id({v})" for v in check)
        emit(f"if len({{{ids}}}) == {len(check)}:")
    for tv, v, fresh in leaves:
        own = "" if fresh else f" and {v}.base is None and {v}.flags.writeable"
        emit(f"{pad}if gget({tv}) is None and {tv}._hooks is None and {tv}._post_hooks is "
             f"None{own}: gset({tv}, make({tv}._result_type, {v}))")
        emit(f"{pad}else: accumulate({tv}, {v}, False, True)")
    if pad:
        emit("else:")
        emit(f"    accumulate_all({{{', '.join(f'{t}: {v}' for t, v, _ in leaves)}}}, False, "
             f"(), False)")
