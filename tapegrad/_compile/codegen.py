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

from ..core.backward import _one
from ..core.engine import _fit as _fit_leaf, accumulate_all, sum_to
from ..core.record import in_compute_dtype, keep_default_dtype
from .capture import BACKWARD, CALL, CONST, EXT, HOST, OP, Const

_ndarray = np.ndarray
_float32 = np.dtype("float32")


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
                   "fit": _fit}
        self.lines = []
        self.exprs = {}  # step j -> (args expression, kw expression) for its rules

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
    """(source, function): the function takes the list of external tensors (the call's,
    then the plan's ext steps') and returns ({slot: array} of the outputs, kept), kept
    being {step: (arrays, kw, ans)} for the steps in `keep` (a compiled node's rules)."""
    w = _Writer(plan)
    emit = w.emit
    for k in range(plan.n_ext):
        emit(f"v{k} = ext[{k}]._data")
    if keep:
        emit("kept = {}")
    for j, st in enumerate(plan.steps):
        kind = st.kind
        idx = st.index
        if kind == CONST:
            emit(f"v{idx} = {w.bind(f'C{j}', st.fn)}.copy()")
        elif kind == EXT:
            emit(f"v{idx} = {w.bind(f'T{j}', st.fn)}._data")
        elif kind == CALL:
            fn = w.bind(_name(st.fn, j), st.fn)
            a = w.bind(f"A{j}", st.ins)
            kw = w.bind(f"W{j}", st.kw)
            emit(f"{fn}(*{a}, **{kw})")
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
    outs = sorted({s for s in plan.outputs if type(s) is int})
    emit("return {" + ", ".join(f"{s}: v{s}" for s in outs) + "}, "
         + ("kept" if keep else "{}"))
    src = "def replay(ext):\n" + "\n".join(_free(w.lines)) + "\n"
    code = compile(src, "<tg.compile replay>", "exec")
    exec(code, w.ns)
    return src, w.ns["replay"]


_VAR = re.compile(r"\b(?:[vdxg]\d+(?:_\d+)?|kws?\d+|gl\d+|ans\d+|G|sv|a)\b")


def _free(lines):
    """Each variable deleted right after its last use, as eager's walk frees each node's
    arrays once its rules ran: the step's memory stays that of eager (and freed blocks
    are reused by the next kernels, warm in the cache)."""
    last = {}
    for i, line in enumerate(lines):
        if line.lstrip().startswith("#"):
            continue
        for name in _VAR.findall(line):
            last[name] = i
    out = []
    for i, line in enumerate(lines):
        out.append(line)
        if line.lstrip().startswith(("return", "#")):
            continue
        dead = sorted({n for n in _VAR.findall(line) if last[n] == i})
        if dead:
            out.append("    del " + ", ".join(dead))
    return out


def _op(w, j, st, keep):
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
    if op.ints_to_float and args:  # as core/record.py apply(): integer inputs computed
        emit(f"c{j} = in_compute_dtype([{args_s}])")  # in the default dtype
        fwd_s = f"*c{j}"
    call = f"{fn}({fwd_s}{', ' if args else ''}**{kw_s})" if kw_s else f"{fn}({fwd_s})"
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


def _backward(w, st):
    """A backward step: the walk unrolled. Each gradient is a variable; a tensor's
    contributions are added in the order the captured walk added them."""
    emit = w.emit
    plan = w.plan
    sch = st.fn
    root = st.ins[0]
    j0 = next(j for j, s in enumerate(plan.steps)
              if s.index <= root < s.index + s.n_out)
    have = {}  # (step, piece) -> variable holding its gradient so far
    have[(j0, 0)] = f"g{j0}"
    emit(f"# backward of v{root}")
    emit(f"g{j0} = one(v{root})")
    emit("L = {}")
    leaves = {}  # id(tensor) -> variable of the tensor (the dict key)
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
        args, kw_s, ans = w.exprs[j]
        rest = "".join(", " + a for a in args) + ("" if kw_s == "{}" else f", **{kw_s}")
        op = s.fn
        emit(f"# {op.name}")
        names = {}
        if op.backward is not None:
            b = w.bind(f"bw{j}", op.backward)
            emit(f"G = {b}(np, {gj}, {ans}{rest})")
            for i, _ in evs:
                names.setdefault(i, f"G[{i}]")
        else:
            for i, _ in evs:
                if i in names:
                    continue
                r = w.bind(f"{_name(op, j)}_{i}", op.vjps[i])
                names[i] = f"d{j}_{i}"
                emit(f"d{j}_{i} = {r}(np, {gj}, {ans}{rest})")
        for i, tgt in evs:
            n += 1
            x = f"x{n}"
            emit(f"{x} = {names[i]}")
            if tgt[0] == "e":
                k = sch.entries[tgt[1]]
                t = late[k - plan.n_ext] if k >= plan.n_ext else None
                tv = leaves.get(k)
                if tv is None:
                    tv = leaves[k] = (w.bind(f"E{k}", t) if t is not None else f"ext[{k}]")
                    first = True
                else:
                    first = False
                emit(f"if {x}.shape != {tv}._data.shape or {x}.dtype != {tv}._data.dtype: "
                     f"{x} = fit_leaf(np, {x}, {tv}._data)")
                emit(f"L[{tv}] = {x}" if first else f"L[{tv}] = L[{tv}] + {x}")
                continue
            _, jj, piece, slot, shape, dtype = tgt
            sh = w.bind(f"sh{n}", shape)
            dt = w.bind(f"dt{n}", dtype)
            emit(f"if {x}.shape != {sh} or {x}.dtype != {dt}: {x} = fit({x}, {sh}, {dt})")
            var = have.get((jj, piece))
            if var is None:
                have[(jj, piece)] = var = f"g{jj}" if plan.steps[jj].n_out == 1 else \
                    f"g{jj}_{piece}"
                emit(f"{var} = {x}")
            else:
                emit(f"{var} = {var} + {x}")
    emit("accumulate_all(L, False, (), False)")
    emit("L = None")
