"""Call steps written out in the generated replay: `optimizer.zero_grad()` and a plain
SGD step, as the lines they run, so that the printed step shows the update itself:

    # SGD.step: p -= lr * p.grad (lr read from the param group now)
    if plain_sgd(O20):
        for grp in O20.param_groups:
            lr = grp["lr"]
            for p in grp["params"]:
                g = gget(p)
                if g is not None:
                    p._data -= lr * g._data
                    p._version_counter[0] += 1
    else:
        step_20(*A20, **W20)

The same arithmetic as `SGD._update_fast` (hyperparameters and the parameter lists read
at each replay, as eager reads them); a group with momentum, weight decay or maximize
takes the optimizer's own step. Every other call step is called as it is (codegen.py).
"""
from ..optim.optimizer import Optimizer
from ..optim.sgd import SGD


def plain_sgd(opt):
    """Every group of `opt` takes SGD's plain update (SGD._update_fast's condition)."""
    for g in opt.param_groups:
        if g["momentum"] != 0 or g["weight_decay"] != 0 or g["maximize"]:
            return False
    return True


NS = {"plain_sgd": plain_sgd}


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
        w.emit("# SGD.step: p -= lr * p.grad (lr read from the param group now)")
        w.emit(f"if plain_sgd({o}):")
        w.emit(f"    for grp in {o}.param_groups:")
        w.emit("        lr = grp[\"lr\"]")
        w.emit("        for p in grp[\"params\"]:")
        w.emit("            g = gget(p)")
        w.emit("            if g is not None:")
        w.emit("                p._data -= lr * g._data")
        w.emit("                p._version_counter[0] += 1")
        w.emit("else:")
        w.emit(f"    {name}({o})")
        return True
    return False
