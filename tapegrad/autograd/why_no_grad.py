"""`why_no_grad(model_or_params)`: why a parameter's `.grad` is None after backward.

For each parameter whose `.grad` is None, the cause by name:

    requires_grad=False        frozen (on purpose, usually): autograd skips it
    cut at FILE:LINE by HOW    something computed from it left the graph there:
                               `.detach()`, `.item()`, `float()`, `.tolist()`, an
                               integer cast, `np.asarray`, or a `no_grad` block
                               (core/cuts.py records these as they happen)
    never reached from the loss  no recorded cut: it took no part in computing what
                               backward started from (a layer built but not called?)
    no backward has run yet    called before any backward(): nothing could have a grad
    not a leaf                 computed by an op; after `w = w - lr * w.grad` (an update
                               outside no_grad, the classic mistake) the fix is an
                               in-place update under no_grad, not retain_grad()

and, for a Module, the parameters that are not in `model.parameters()` at all: modules
kept in a plain Python list/tuple/dict attribute (use nn.ModuleList / ModuleDict) and
tensors that require grad kept as plain attributes (use nn.Parameter). No optimizer
built from `model.parameters()` ever updates those.

The result is a `NoGradReport`: a dict {name: cause} whose repr is the readable report
(so a REPL shows it once; a script prints it). `warn_on_first_step` is what
`optimizer.step()` runs once per optimizer (optim/optimizer.py).
"""
import warnings
from collections.abc import Mapping

from ..core import backward as _backward
from ..core import cuts as _cuts
from ..core.grad_attribute import SLOT as _GRAD
from ..core.tensor_base import TensorBase

_grad = _GRAD.__get__  # .grad without the non-leaf warning: asking why is not the mistake

__all__ = ["why_no_grad", "NoGradReport"]

_NO_BACKWARD = ("no backward has run yet (call loss.backward() first; why_no_grad "
                "explains a grad that is still None after it)")
_NEVER = ("never reached from the loss (it took no part in computing it: a layer built "
          "but never called?)")


class NoGradReport(dict):
    """{parameter name: cause} for the parameters whose grad is None; `.unregistered`
    lists the modules/tensors a Module holds where parameters() cannot see them."""

    def __init__(self, causes, unregistered, total):
        super().__init__(causes)
        self.unregistered = list(unregistered)
        self.total = total

    def __str__(self):
        lines = []
        if self:
            lines.append(f"why_no_grad: {len(self)} of {self.total} parameters have grad None")
            width = max(len(n) for n in self)
            lines += [f"  {n + ':':<{width + 1}} {c}" for n, c in self.items()]
        else:
            lines.append(f"why_no_grad: all {self.total} parameters have a gradient")
        if self.unregistered:
            lines.append("not in model.parameters() (no optimizer built from it updates them):")
            lines += [f"  {u}" for u in self.unregistered]
        return "\n".join(lines)

    __repr__ = __str__


def why_no_grad(model_or_params):
    """The cause for each parameter whose `.grad` is None (see the module docstring).

    `model_or_params`: a Module, a dict {name: tensor}, an iterable of tensors, of
    (name, tensor) pairs (`named_parameters()`), or one tensor. Call it after backward."""
    named, unregistered = _named(model_or_params)
    causes = {name: cause(p) for name, p in named if _grad(p) is None}
    return NoGradReport(causes, unregistered, len(named))


def cause(p):
    """One line: why `p.grad` is None."""
    if not p.requires_grad:
        return "requires_grad=False (frozen)"
    if not p.is_leaf:
        if _looks_like_an_update(p):
            return ("not a leaf: it was computed from the parameter it replaced (an update "
                    "such as `w = w - lr * w.grad` outside no_grad makes a new, non-leaf "
                    "tensor that backward never fills); update in place instead: "
                    "`with tg.no_grad(): w -= lr * w.grad`, then `w.grad = None`")
        return ("not a leaf: it was computed by an op, and only leaves keep .grad (call "
                ".retain_grad() on it before backward to keep its gradient)")
    recs = _cuts.cuts_of(p)
    if not recs and _backward.calls == 0:
        return _NO_BACKWARD
    if not recs:
        return _NEVER
    first = recs[-1]
    text = f"cut at {first[1]} by {first[0]}"
    for how, site in reversed(recs[:-1]):
        text += f"; before that at {site} by {how}"
    return text


def _looks_like_an_update(p, limit=64):
    """Does `p`'s graph reach exactly one leaf that requires grad, of p's shape and with
    a .grad of its own? That is `w = w - lr * w.grad` (w.grad is a constant in the
    expression, so the old w is the one leaf), not an intermediate result of a model.
    (A heuristic: it picks the advice, not whether there is a problem.)"""
    if p.grad_fn.inputs is None:
        # backward already freed the graph (the usual moment to ask): its edges are gone,
        # so judge by the op that made p, an update's add/sub
        return getattr(p.grad_fn.op, "name", "") in ("add", "sub")
    leaves, seen, todo = [], set(), [p.grad_fn]
    while todo and len(seen) < limit:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        for nxt, _ in node.next_functions:
            if nxt is None:
                continue
            var = getattr(nxt, "variable", None)
            if var is not None:
                leaves.append(var)
            else:
                todo.append(nxt)
    if todo or len({id(v) for v in leaves}) != 1:
        return False
    leaf = leaves[0]
    return tuple(leaf.shape) == tuple(p.shape) and _grad(leaf) is not None


def warn_on_first_step(optimizer):
    """Warn (once, on the first step) about the parameters given to `optimizer` that
    require grad but have no gradient: that step leaves them unchanged."""
    missing = []
    for g, group in enumerate(optimizer.param_groups):
        names = group.get("param_names")
        for i, p in enumerate(group["params"]):
            if _grad(p) is None and p.requires_grad:
                name = names[i] if names else f"param_groups[{g}]['params'][{i}]"
                missing.append(f"{name} (shape {tuple(p.shape)}): {cause(p)}")
    if not missing:
        return
    total = sum(len(g["params"]) for g in optimizer.param_groups)
    if len(missing) == total:  # nothing got a gradient: usually backward was not called
        warnings.warn(
            f"{type(optimizer).__name__}.step(): none of the {total} parameters given to the "
            "optimizer has a gradient (was loss.backward() called before step()?), so this "
            "step updates nothing (this warning is shown once per optimizer)",
            UserWarning, stacklevel=3)
        return
    shown = missing[:5] + ([f"... and {len(missing) - 5} more"] if len(missing) > 5 else [])
    warnings.warn(
        f"{type(optimizer).__name__}.step(): {len(missing)} parameter(s) given to the "
        "optimizer require grad but have grad None, so this step does not update them:\n  "
        + "\n  ".join(shown) + "\ncall tg.autograd.why_no_grad(model) for the report "
        "(frozen parameters, requires_grad=False, are never listed; this warning is shown "
        "once per optimizer)", UserWarning, stacklevel=3)


def _named(obj):
    """([(name, tensor)], [unregistered descriptions])."""
    if isinstance(obj, TensorBase):
        return [(obj.name or "tensor", obj)], []
    if isinstance(obj, Mapping):  # {name: tensor}
        return [(str(k), v) for k, v in obj.items()], []
    if hasattr(obj, "named_parameters") and hasattr(obj, "named_modules"):
        return list(obj.named_parameters()), _unregistered(obj)
    named = []
    for i, item in enumerate(obj):
        if isinstance(item, tuple) and len(item) == 2:
            named.append(item)
        elif isinstance(item, dict) and "params" in item:  # an optimizer's param group
            named += [(f"param {i}.{j}", p) for j, p in enumerate(item["params"])]
        else:
            named.append((item.name or f"param {i}", item))
    return named, []


def _unregistered(model):
    """Modules in plain list/tuple/dict attributes, and grad-requiring tensors kept as
    plain attributes: registered nowhere, so parameters() cannot see them."""
    registered = {id(p) for p in model.parameters()}
    out = []
    for prefix, mod in model.named_modules():
        for attr, value in vars(mod).items():
            if attr.startswith("_"):
                continue
            where = f"{prefix}.{attr}" if prefix else attr
            if isinstance(value, TensorBase):
                if value.requires_grad and id(value) not in registered:
                    out.append(f"{where}: a tensor with requires_grad=True kept as a plain "
                               "attribute; wrap it in nn.Parameter to register it")
                continue
            items = value.values() if isinstance(value, dict) else value
            if not isinstance(value, (list, tuple, dict)):
                continue
            mods = [m for m in items if hasattr(m, "named_parameters")
                    and hasattr(m, "named_modules")]
            params = [q for m in mods for q in m.parameters() if id(q) not in registered]
            if params:
                kind = type(value).__name__
                fix = "nn.ModuleDict" if isinstance(value, dict) else "nn.ModuleList"
                names = ", ".join(type(m).__name__ for m in mods[:4]) + (
                    ", ..." if len(mods) > 4 else "")
                noun = "module" if len(mods) == 1 else "modules"
                out.append(f"{where}: a plain Python {kind} of {len(mods)} {noun} ({names}); "
                           f"their {len(params)} parameters are not registered: use {fix}")
    return out
