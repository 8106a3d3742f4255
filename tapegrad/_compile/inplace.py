"""In place where nothing else reads: the replay's elementwise lines written into the
buffer of an operand that dies there.

    v5 = v3 + v4           ->  v5 = np.add(v3, v4, out=v3)
    v6 = maximum(v5, 0)    ->  v6 = maximum(v5, 0, out=v5)

The same ufunc on the same operands gives the same bits; what changes is one fresh
full-size array fewer. That matters more than the allocation: a (32, 16, 256) float32
add takes ~30 us into a fresh array and ~13 us into one of its operands (three 512 KiB
arrays no longer fit the core's 2 MiB L2 cache with the step's others; 1 thread,
measured), and the hand-written NumPy steps tapegrad is compared with write in place
too. Eager cannot do this: it does not know whether a user still holds an operand.
The replay knows, because it is straight-line code (codegen.py); an operand `A` of
line `X = A op B` (or `X = ufunc(A)`) is written into only when
  - the value in A was made at a line known to return a new array that nothing else
    holds (arithmetic, a comparison, matmul, a ufunc without out=, a reduction, ...),
  - since then A was read only inside expressions that make new arrays (never passed
    to another function, stored in a container, returned, or bound to a second name
    as it is or as a view),
  - no line after this one reads A,
  - A has X's shape and dtype, as captured (`metas`: {name: (shape, dtype)}, known
    from the capture and the rules; the guards hold them at each replay), at least 1-d.
Everything else is left as it is: a name this pass cannot follow is never written
into. A gradient a leaf's .grad will hold keeps owning its memory (an operand that is
a view of a fresh product is used only when X is not handed on afterwards).
"""
import ast

_BINARY = {ast.Add: "np.add", ast.Sub: "np.subtract", ast.Mult: "np.multiply",
           ast.Div: "np.divide"}
_UNARY = {"exp", "log", "tanh", "sqrt", "square", "abs", "negative"}
# functions of the replay's namespace that return a new array and keep no argument
# (sum_to_fwd: a sum over axes, a new array even over none; ng_fwd: the norms' dx
# kernel, a new array it updates in place)
_FRESH_CALLS = {"matmul", "linear_rows", "maximum", "add_reduce", "max_reduce",
                "max_last", "sum_trailing", "sum_to_fwd", "ng_fwd", "empty"}
# functions that return a tuple of new arrays and keep no argument (the forward kernels
# that also return what their rules read)
_TUPLE_CALLS = {"gelu_f32", "layer_norm_rows"}
_FRESH_NP = _UNARY | {"add", "subtract", "multiply", "divide", "where", "minimum",
                      "maximum", "isfinite"}
_META_ATTRS = {"shape", "dtype", "ndim", "size", "flags", "base"}
_VIEW_METHODS = {"reshape", "transpose", "ravel", "swapaxes"}
_NEW_METHODS = {"sum", "max", "min", "mean", "copy", "any", "all"}


def _fresh_call(node):
    """A call of a function that returns a new array (no `out=`)."""
    if any(k.arg == "out" for k in node.keywords):
        return False
    f = node.func
    if type(f) is ast.Name:
        return f.id in _FRESH_CALLS
    return (type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "np"
            and f.attr in _FRESH_NP)


def _kind(expr):
    """'own': a new array owning its memory; 'view': a view of a new array nothing names;
    None: anything else (it may be, or share memory with, an array held elsewhere)."""
    t = type(expr)
    if t in (ast.BinOp, ast.Compare) or (t is ast.UnaryOp and type(expr.op) is ast.USub):
        return "own"
    if t is ast.Call:
        if _fresh_call(expr):
            return "own"
        f = expr.func
        if type(f) is ast.Attribute:
            if f.attr == "copy":
                return "own"
            if f.attr in _VIEW_METHODS and _kind(f.value) is not None:
                return "view"
        return None
    if t is ast.Attribute and expr.attr == "T" and _kind(expr.value) is not None:
        return "view"
    return None


def _consumed(node, parents):
    """Does this read of a name leave no reference to its array behind (the value is
    only an input of something that makes a new array, or its metadata is read)?"""
    while True:
        p = parents.get(node)
        t = type(p)
        if t in (ast.BinOp, ast.Compare, ast.UnaryOp, ast.AugAssign):
            return True
        if t is ast.BoolOp:  # `a and b` returns an operand: only when it is a test
            node = p
            continue
        if t is ast.Call:
            if node is p.func:
                return False
            return node in p.args and (_fresh_call(p) or (
                type(p.func) is ast.Name and p.func.id in _TUPLE_CALLS))
        if t is ast.Attribute:
            if p.attr in _META_ATTRS:
                return True
            q = parents.get(p)
            if type(q) is ast.Call and q.func is p:  # a method call
                if p.attr in _NEW_METHODS:
                    return True
                if p.attr in _VIEW_METHODS:
                    node = q  # a view: consumed only where the view itself is
                    continue
                return False
            if p.attr == "T":
                node = p
                continue
            return False
        if t is ast.Subscript:
            if type(p.ctx) is ast.Store:  # `a[i] -= 1.0`: a write into it, no new name
                return True
            node = p  # a view or a copy: consumed only where it is
            continue
        if t in (ast.If, ast.While) and node is p.test:
            return True
        return False


class _Stmt:
    """One statement of the function's body (a compound one with all it holds): the names
    it reads (name -> [consumed?]), the name it binds as a whole (`X = ...` at this
    level), and the other names it binds."""

    __slots__ = ("node", "loads", "target", "stores")

    def __init__(self, node, parents):
        self.node = node
        self.loads = {}
        self.stores = set()
        self.target = None
        if (type(node) is ast.Assign and len(node.targets) == 1
                and type(node.targets[0]) is ast.Name):
            self.target = node.targets[0].id
        for n in ast.walk(node):
            if type(n) is not ast.Name:
                continue
            if type(n.ctx) is ast.Load:
                self.loads.setdefault(n.id, []).append(_consumed(n, parents))
            elif type(n.ctx) is ast.Store and n.id != self.target:
                self.stores.add(n.id)
            elif type(n.ctx) is ast.Del:
                self.stores.add(n.id)
        if type(node) is ast.AugAssign and type(node.target) is ast.Name:
            # `a += b`: a write into a's own buffer (a read that leaves nothing behind)
            self.loads.setdefault(node.target.id, []).append(True)
            self.stores.discard(node.target.id)


def _dead_after(stmts, i, name):
    """No statement after i reads `name` before binding it anew as a whole."""
    for s in stmts[i + 1:]:
        if name in s.loads:
            return False
        if s.target == name:
            return True
    return True


def _escapes_after(stmts, i, name):
    """The array bound to `name` at statement i may be held after its last read (passed
    on, stored, returned)."""
    for s in stmts[i + 1:]:
        if not all(s.loads.get(name, (True,))):
            return True
        if s.target == name:
            return False
    return False


def _candidate(node):
    """(the ufunc's name in the replay, its operand nodes) of `X = A op B` / `X =
    ufunc(A[, c])`, else None."""
    v = node.value
    if type(v) is ast.BinOp and type(v.op) in _BINARY:
        ops = [v.left, v.right]
        if all(type(o) in (ast.Name, ast.Constant) for o in ops):
            return _BINARY[type(v.op)], ops
    if type(v) is ast.Call and not v.keywords and v.args and all(
            type(a) in (ast.Name, ast.Constant) for a in v.args):
        f = v.func
        if type(f) is ast.Name and f.id == "maximum" and len(v.args) == 2:
            return "maximum", v.args
        if (type(f) is ast.Attribute and type(f.value) is ast.Name and f.value.id == "np"
                and f.attr in _UNARY and len(v.args) == 1):
            return f"np.{f.attr}", v.args
    return None


def rewrite(lines, metas):
    """`lines` (the replay's body, 4-space indented, one statement or block line each)
    with the lines this module's rule allows rewritten in place."""
    src = "def replay(ext):\n" + "\n".join(lines) + "\n"
    fn = ast.parse(src).body[0]
    parents = {}
    for p in ast.walk(fn):
        for c in ast.iter_child_nodes(p):
            parents[c] = p
    stmts = [_Stmt(s, parents) for s in fn.body]
    owned = {}  # name -> 'own' / 'view': its array is this pass's to reuse
    out = list(lines)
    for i, s in enumerate(stmts):
        for name, reads in s.loads.items():
            if not all(reads):
                owned.pop(name, None)
        for name in s.stores:
            owned.pop(name, None)
        x = s.target
        if x is None:
            continue
        kind = _kind(s.node.value)
        cand = _candidate(s.node)
        m = metas.get(x)
        if cand is not None and m is not None and len(m[0]):
            func, ops = cand
            for o in ops:
                a = getattr(o, "id", None)
                have = owned.get(a)
                if (have is None or metas.get(a) != m
                        or not (a == x or _dead_after(stmts, i, a))
                        or (have == "view" and _escapes_after(stmts, i, x))):
                    continue
                k = s.node.lineno - 2  # (the source's first line is the def)
                args = ", ".join(ast.unparse(e) for e in ops)
                indent = lines[k][:len(lines[k]) - len(lines[k].lstrip())]
                out[k] = f"{indent}{x} = {func}({args}, out={a})"
                kind = have
                owned.pop(a, None)  # (its array is x's now)
                break
        if kind is None:
            owned.pop(x, None)
        else:
            owned[x] = kind
    return out
