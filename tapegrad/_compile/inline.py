"""Call steps written out in the generated replay: `optimizer.zero_grad()` and a plain
SGD step, as the lines they run, so that the printed step shows the update itself:

    # SGD.step: p <- p - lr * p.grad, rounded once (lr read from the param group now)
    if plain_sgd(O20):
        for grp in O20.param_groups:
            lr = grp["lr"]
            for p in grp["params"]:
                g = gget(p)
                if g is not None:
                    add_scaled_(p._data, -lr, g._data)
                    p._version_counter[0] += 1
    else:
        step_20(*A20, **W20)

The same arithmetic as `SGD._update_fast` (hyperparameters and the parameter lists read
at each replay, as eager reads them); a group with momentum, weight decay or maximize
takes the optimizer's own step. Adam and AdamW steps are written out the same way:
`adam_flat`'s operations on each group's flat state (optim/_flat.py), in its order (the
same bits), when every group takes that path (`adam_plan`, its groups, packs and views
kept between replays while they hold: `_Kept`); amsgrad, maximize, Adam's
L2 weight decay, a lerp weight >= 0.5 or state the flat path cannot use take the
optimizer's own step. `clip_grad_norm_` of a parameter list (the 2-norm, float32 or
float64 gradients of one dtype) is written out as its common path. Every other call
step is called as it is (codegen.py).
"""
from operator import is_

from ..core.grad_attribute import SLOT
from ..optim._arrays import adam_moments_, add_scaled_
from ..optim.adam import Adam
from ..optim.optimizer import Optimizer
from ..optim.sgd import SGD


def plain_sgd(opt):
    """Every group of `opt` takes SGD's plain update (SGD._update_fast's condition)."""
    for g in opt.param_groups:
        if g["momentum"] != 0 or g["weight_decay"] != 0 or g["maximize"]:
            return False
    return True


_NUM = (int, float)


def adam_plan(opt, memo=None):
    """[(group, pack, params, their arrays, their gradients' arrays)] for the groups with
    gradients when each takes `adam_flat`'s common path at this step (what eager's
    `Adam._update_fast` would run, decided from the same values), else None.

    `memo` (a one-item list, the replay's own) keeps the last plan's parts that change
    only with the optimizer's structure (`_Kept`): while they hold (checked each call),
    the plan is rebuilt from them without `_pack` and its bookkeeping."""
    if "_none_grads_checked" not in opt.__dict__:  # the first step's warning: eager's
        return None
    kept = memo[0] if memo is not None else None
    if kept is not None:
        plan = kept.plan(opt)
        if plan is not None:
            return plan
    plan = []
    for gi, grp in enumerate(opt.param_groups):
        if not _adam_common(grp):
            return None
        params = [p for p in grp["params"] if p.grad is not None]
        if not params:
            continue  # eager's update of no parameters: nothing
        pack = opt._pack(gi, grp, params)
        if pack is None:
            return None
        plan.append((grp, pack, params, [p._data for p in params],
                     [p.grad._data for p in params]))
    if memo is not None:
        memo[0] = _Kept(opt, plan)
    return plan


def _adam_common(grp):
    """The group's hyperparameters take adam_flat's common path (read now, each step)."""
    b1, b2 = grp["betas"]
    lr, wd, eps = grp["lr"], grp["weight_decay"], grp["eps"]
    return not (grp["amsgrad"] or grp["maximize"] or grp.get("foreach") is False
                or not (type(b1) in _NUM and type(b2) in _NUM and type(lr) in _NUM
                        and type(wd) in _NUM and type(eps) in _NUM)
                or (wd != 0 and not grp.get("decoupled_weight_decay", False))
                or not abs(1 - b1) < 0.5)


_gget = SLOT.__get__


class _Kept:
    """The parts of an Adam plan fixed by the optimizer's structure: the groups (the same
    dicts, the same parameter lists holding the same parameters), every parameter with a
    gradient, each group's pack (still the optimizer's, holding the parameters' state:
    `FlatPack.holds`, written out) and its steps equal. `plan()` checks them all and
    returns the plan with this step's arrays, or None (then adam_plan decides afresh:
    also when a parameter has no gradient, which eager's reads would warn about)."""

    def __init__(self, opt, plan):
        self.groups = opt.param_groups
        self.packs = opt.__dict__.get("_packs")
        used = {id(grp): pack for grp, pack, _, _, _ in plan}
        # per group: (group, its list, its parameters, its index, pack, the views)
        self.each = []
        for gi, grp in enumerate(self.groups):
            pack = used.get(id(grp))
            params = tuple(grp["params"])
            if pack is None or pack.params != params:
                self.each = None  # (a group without gradients: decided afresh)
                return
            views = list(zip(*(pack.views[n] for n in ("exp_avg", "exp_avg_sq", "step"))))
            self.each.append((grp, grp["params"], params, gi, pack, views))

    def plan(self, opt):
        each = self.each
        groups = opt.param_groups
        if (each is None or groups is not self.groups or len(groups) != len(each)
                or opt.__dict__.get("_packs") is not self.packs):
            return None
        state = opt.state
        plan = []
        for group, (grp, lst, params, gi, pack, views) in zip(groups, each):
            if (group is not grp or grp["params"] is not lst or len(lst) != len(params)
                    or not all(map(is_, lst, params)) or not _adam_common(grp)
                    or self.packs.get(gi) is not pack or len(pack.views) != 3):
                return None
            grads = list(map(_gget, params))
            for g in grads:
                if g is None:
                    return None
            try:  # FlatPack.holds: each parameter's state is still the pack's views
                for p, (m, v, s) in zip(params, views):
                    st = state.get(p)
                    if (st["exp_avg"]._data is not m or st["exp_avg_sq"]._data is not v
                            or st["step"]._data is not s):
                        return None
            except (TypeError, KeyError, AttributeError):
                return None  # (no state, a buffer missing or replaced by something else)
            # every parameter at the same step (one bias correction: _pack's test); the
            # values as a list (the comparison NumPy's min and max would make)
            steps = pack.flat["step"].tolist()
            s = steps[0]
            if s != s or steps.count(s) != len(steps):
                return None
            plan.append((grp, pack, list(params), [p._data for p in params],
                         [g._data for g in grads]))
        return plan


def clip_arrays(grads):
    """The gradients' arrays when clip_grad_norm_'s 2-norm takes its one-dtype path
    (float32 or float64; float16 and mixed dtypes take the function), else None."""
    if not grads:
        return None
    arrays = [g._data for g in grads]
    dt = arrays[0].dtype
    if dt.kind != "f" or dt.itemsize < 4 or any(a.dtype != dt for a in arrays):
        return None
    return arrays


NS = {"plain_sgd": plain_sgd, "adam_plan": adam_plan, "clip_arrays": clip_arrays,
      "add_scaled_": add_scaled_, "adam_moments_": adam_moments_}

# adam_flat's common path (maximize, amsgrad, L2 decay and the other lerp branch are
# adam_plan's fallbacks), its operations in its order
_ADAM = """\
    for grp, pk, ts, ps, gs in P:
        b1, b2 = grp["betas"]
        lr, wd = grp["lr"], grp["weight_decay"]
        g, tmp, upd = pk.grad, pk.tmp, pk.upd
        m, v, steps = pk.flat["exp_avg"], pk.flat["exp_avg_sq"], pk.flat["step"]
        np.concatenate(gs, axis=None, out=g)
        steps += 1
        if wd != 0:  # AdamW's decay: p *= 1 - lr wd (the same float for each)
            decay = 1 - lr * wd
            for p in ps:
                p *= decay
        t = float(steps[0])  # m, v; upd = -lr / (1 - b1^t) m / (sqrt(v) / sqrt(1 - b2^t) + eps)
        adam_moments_(g, m, v, tmp, upd, b1, b2, lr / (1 - b1 ** t), (1 - b2 ** t) ** 0.5,
                      grp["eps"])
        for p, u in zip(ps, pk.upd_views):
            p += u
        for p in ts:
            p._version_counter[0] += 1"""


def call(w, j, st):
    """Write call step j out (True), or leave it to the generic call (False)."""
    fn, ins, kw = st.fn, st.ins, st.kw
    if fn is Optimizer.zero_grad and not kw and len(ins) in (1, 2) and (
            len(ins) == 1 or ins[1] is True):
        o = w.bind(f"O{j}", ins[0])
        w.emit("# optimizer.zero_grad(): every parameter's .grad to None")
        w.emit(f"for grp in {o}.param_groups:")
        w.emit("    for p in grp[\"params\"]:")
        w.emit("        gset(p, None)")
        return True
    if (len(ins) == 1 and not kw and type(ins[0]) is SGD and fn is SGD.step
            and type(ins[0]).step is SGD.step):
        o = w.bind(f"O{j}", ins[0])
        name = w.bind(f"step_{j}", fn)
        w.emit("# SGD.step: p <- p - lr * p.grad, rounded once (lr read from the param group "
               "now)")
        w.emit(f"if plain_sgd({o}):")
        w.emit(f"    for grp in {o}.param_groups:")
        w.emit("        lr = grp[\"lr\"]")
        w.emit("        for p in grp[\"params\"]:")
        w.emit("            g = gget(p)")
        w.emit("            if g is not None:")
        w.emit("                add_scaled_(p._data, -lr, g._data)")
        w.emit("                p._version_counter[0] += 1")
        w.emit("else:")
        w.emit(f"    {name}({o})")
        return True
    if (len(ins) == 1 and not kw and isinstance(ins[0], Adam) and fn is Adam.step
            and type(ins[0]).step is Adam.step
            and type(ins[0])._update_fast is Adam._update_fast):
        o = w.bind(f"O{j}", ins[0])
        name = w.bind(f"step_{j}", fn)
        w.emit(f"# {type(ins[0]).__name__}.step: adam_flat's update of each group's flat "
               "state, hyperparameters and steps read now")
        memo = w.bind(f"AP{j}", [None])
        w.emit(f"P = adam_plan({o}, {memo})")
        w.emit("if P is None:")
        w.emit(f"    {name}({o})")
        w.emit("else:")
        w.emit(f"    {o}._opt_called = True")
        for line in _ADAM.split("\n"):
            w.emit(line)
        return True
    from ..nn.utils.clip_grad import clip_grad_norm_
    if (fn is clip_grad_norm_ and not kw and len(ins) == 5 and type(ins[0]) is list
            and type(ins[1]) in (int, float) and ins[2] == 2.0 and ins[3] is False):
        ps = w.bind(f"PL{j}", ins[0])
        name = w.bind(f"clip_{j}", fn)
        a = w.bind(f"A{j}", ins)
        w.emit(f"# clip_grad_norm_(max_norm={float(ins[1])!r}): the gradients' total 2-norm "
               "(a dot product each); above max_norm, each scaled by max_norm / (norm + 1e-6)")
        w.emit(f"gs = [g for g in map(gget, {ps}) if g is not None]")
        w.emit(f"if len(gs) != len({ps}):")
        w.emit(f"    gs = [p.grad for p in {ps} if p.grad is not None]  # (as eager reads "
               "them, warning on each non-leaf)")
        w.emit("ars = clip_arrays(gs)")
        w.emit("if ars is None:")
        w.emit(f"    {name}(*{a})")
        w.emit("else:")
        w.emit("    total = np.sqrt(np.asarray(sum(float(np.dot(ar.ravel(), ar.ravel())) "
               "for ar in ars), dtype=ars[0].dtype))")
        w.emit(f"    coef = np.minimum({float(ins[1])!r} / (total + 1e-6), 1.0)")
        w.emit("    if not coef == 1.0:  # (x * 1.0 is x: no pass)")
        w.emit("        c = coef.astype(ars[0].dtype)")
        w.emit("        with np.errstate(invalid=\"ignore\"):")
        w.emit("            for ar in ars:")
        w.emit("                ar *= c")
        w.emit("    for g in gs:")
        w.emit("        g._version_counter[0] += 1")
        return True
    return False
