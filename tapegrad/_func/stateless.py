"""The stateless module API: call a module with other parameters, stack modules' state.

    functional_call(model, {'fc.weight': w, ...}, (x,))   model(x) with those tensors in
                                                          place of its own, restored after
    stack_module_state([m0, m1, m2])  -> (params, buffers): each name -> the M models'
                                         tensors stacked on a new first axis

Together with vmap and grad they turn a module into a function of its parameters, as in
PyTorch's per-sample-gradient and model-ensembling tutorials:

    params, buffers = stack_module_state(models)
    vmap(lambda p, b, x: functional_call(base, (p, b), (x,)), in_dims=(0, 0, None))(...)

While the call runs the given tensors sit in the owning modules' `_parameters` /
`_buffers` tables (so `module.weight` and `named_parameters()` see them, as in torch);
names the module does not have become plain attributes for the call (strict=False).
Works with any module that keeps those tables (tapegrad.nn.Module); nn is not imported
here (it sits above tapegrad.func).
"""
from ..ops import shape as _shape

__all__ = ["functional_call", "stack_module_state"]


def _merge(dicts):
    if isinstance(dicts, dict):
        return dicts
    if isinstance(dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        seen, repeated = set(), []
        for d in dicts:
            for k in d:
                if k in seen and k not in repeated:
                    repeated.append(k)
                seen.add(k)
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        return {k: v for d in dicts for k, v in d.items()}
    raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple of "
                     f"dicts, but got {type(dicts)}")


def _untie(module, given):
    """Give every name tied to a given name (the same Parameter/buffer object registered
    twice, e.g. an embedding shared with the output layer) the given value."""
    names = {}
    for name, t in list(module.named_parameters(remove_duplicate=False)) + \
            list(module.named_buffers(remove_duplicate=False)):
        names.setdefault(id(t), set()).add(name)
    tied = {n: group for group in names.values() if len(group) > 1 for n in group}
    given_tied = [n for n in given if n in tied]
    for n in given_tied:
        group = tied[n]
        values = {id(given[m]) for m in group if m in given}
        if len(values) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(group)}, "
                             f"which are tied. Consider using tie_weights=False")
    out = dict(given)
    for n in given_tied:
        for m in tied[n]:
            out[m] = given[n]
    return out


def _owner(module, name):
    """(submodule, attribute) for a dotted name."""
    *path, attr = name.split(".")
    mod = module
    for i, p in enumerate(path):
        sub = mod.__dict__.get("_modules", {}).get(p)
        if sub is None:
            raise AttributeError(f"functional_call: {type(mod).__name__} has no submodule "
                                 f"'{p}' (from the key '{name}')")
        mod = sub
    return mod, attr


_MISSING = object()


def _swap(module, values):
    """Put `values` in place; returns the undo list [(submodule, table or None, attr, old)]."""
    undo = []
    try:
        for name, value in values.items():
            mod, attr = _owner(module, name)
            d = mod.__dict__
            for table in ("_parameters", "_buffers"):
                if attr in d.get(table, {}):
                    undo.append((mod, table, attr, d[table][attr]))
                    d[table][attr] = value
                    break
            else:  # not a parameter or buffer: a plain attribute for the call
                undo.append((mod, None, attr, d.get(attr, _MISSING)))
                d[attr] = value
    except BaseException:
        _restore(undo)
        raise
    return undo


def _restore(undo):
    for mod, table, attr, old in reversed(undo):
        d = mod.__dict__
        if table is not None:
            d[table][attr] = old
        elif old is _MISSING:
            d.pop(attr, None)
        else:
            d[attr] = old


def _check_keys(module, values):
    expected = [n for n, _ in module.named_parameters(remove_duplicate=False)] + \
        [n for n, _ in module.named_buffers(remove_duplicate=False)]
    missing = [n for n in expected if n not in values]
    unexpected = [n for n in values if n not in set(expected)]
    msgs = []
    if unexpected:
        msgs.append(f"Unexpected key(s): {', '.join(map(repr, unexpected))}.")
    if missing:
        msgs.append(f"Missing key(s): {', '.join(map(repr, missing))}.")
    if msgs:
        raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                           + "\n\t".join(msgs))


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with the given tensors in place of its parameters and
    buffers (torch.func.functional_call). `args` that is not a tuple is one argument."""
    values = _merge(parameter_and_buffer_dicts)
    for k, v in values.items():
        if not isinstance(k, str):
            raise TypeError(f"functional_call: keys must be parameter/buffer names (str), "
                            f"got {k!r}")
    if tie_weights:
        values = _untie(module, values)
    if strict:
        _check_keys(module, values)
    if kwargs is None:
        kwargs = {}
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    undo = _swap(module, values)
    try:
        return module(*args, **kwargs)
    finally:
        _restore(undo)


def _stacked_leaf(tensors, name):
    rg = [t.requires_grad for t in tensors]
    if any(rg) and not all(rg):
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    shapes = {tuple(t.shape) for t in tensors}
    if len(shapes) != 1:
        raise RuntimeError(f"stack_module_state: Expected {name} to have the same shape in "
                           f"every model, got {sorted(shapes)}")
    res = _shape.stack([t.detach() for t in tensors])
    if all(rg):
        res.requires_grad_()
    return res


def stack_module_state(models):
    """(params, buffers) of M models of one class: each name maps to a new leaf holding
    the M tensors stacked on dim 0 (requiring grad when the originals do)."""
    models = list(models)
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    typ = type(models[0])
    if not all(type(m) is typ for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    out = []
    for kind in ("named_parameters", "named_buffers"):
        per_model = [dict(getattr(m, kind)()) for m in models]
        for i, d in enumerate(per_model[1:], 1):
            if list(d) != list(per_model[0]):
                raise RuntimeError(f"stack_module_state: model {i} has {kind[6:]} "
                                   f"{list(d)}, model 0 has {list(per_model[0])}")
        out.append({k: _stacked_leaf([d[k] for d in per_model], k) for k in per_model[0]})
    return out[0], out[1]

