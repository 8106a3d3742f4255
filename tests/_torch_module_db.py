"""PyTorch's own module database (`module_db`) fed to tapegrad: the conformance machinery.

For each `ModuleInfo` with a tapegrad class of the same name (`nn.Linear` ->
`tg.nn.Linear`), every module input torch generates (float64, train and eval mode) is
run through both libraries: the module is built with the same constructor arguments,
torch's parameters and buffers are copied into tapegrad's (`load_state_dict`), the same
forward inputs are fed, and the outputs, the gradients of the inputs and of every
parameter (one random cotangent per output), and the buffers after the call (running
statistics) are compared. tests/test_torch_module_db.py runs it under pytest;
`python tests/_torch_module_db.py` prints the summary.
"""
import sys

import torch
from torch.testing._internal.common_modules import module_db

import _torch_op_db as H
import tapegrad as tg
# (torch.backends' global flags, frozen by importing torch's test databases, are allowed
# again by _torch_op_db, imported above)

# modules whose outputs are random (their generators differ): shapes and dtypes only
NO_VALUES = {"nn.Dropout", "nn.Dropout1d", "nn.Dropout2d", "nn.Dropout3d", "nn.AlphaDropout",
             "nn.FeatureAlphaDropout", "nn.RReLU"}


def tg_class(mi):
    obj = tg
    for part in mi.name.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj if isinstance(obj, type) else None


def _grads(outs_t, outs_g, params_t, params_g, leaves, seed):
    """(torch's gradients, tapegrad's) of the inputs and parameters."""
    pairs = [(o, g) for o, g in zip(outs_t, outs_g)
             if isinstance(o, torch.Tensor) and o.requires_grad and o.dtype.is_floating_point]
    if not pairs:
        return None
    gen = torch.Generator().manual_seed(seed)
    cots = [torch.randn(o.shape, dtype=o.dtype, generator=gen) for o, _ in pairs]
    wrt_t = [t for t, _ in leaves] + params_t
    wrt_g = [g for _, g in leaves] + params_g
    with H._quiet():
        exp = torch.autograd.grad([o for o, _ in pairs], wrt_t, cots, allow_unused=True)
        got = tg.autograd.grad([g for _, g in pairs], wrt_g,
                               [tg.from_numpy(c.numpy().copy()) for c in cots],
                               allow_unused=True)
    return exp, got, wrt_t


def run_module(mi, cls, training):
    """[(input index, reason or None)] for float64 inputs in train or eval mode."""
    results = []
    torch.manual_seed(0)
    try:
        inputs = mi.module_inputs_func(mi, device="cpu", dtype=torch.float64,
                                       requires_grad=True, training=training)
    except Exception as e:
        return [(-1, f"input generation: {type(e).__name__}")]
    values = mi.name not in NO_VALUES
    for i, inp in enumerate(inputs):
        c, f = inp.constructor_input, inp.forward_input
        try:
            with H._quiet():
                m_t = mi.module_cls(*c.args, **c.kwargs).to(torch.float64)
                m_t.train(training)
        except Exception:
            continue
        try:
            cargs = H.to_tg(tuple(c.args), [])
            ckwargs = H.to_tg(dict(c.kwargs), [])
            fargs_leaves = []
            fargs = H.to_tg(tuple(f.args), fargs_leaves)
            fkwargs = H.to_tg(dict(f.kwargs), fargs_leaves)
        except H.Unsupported:
            continue
        try:
            with H._quiet():
                m_g = cls(*cargs, **ckwargs).to(tg.float64)
                m_g.train(training)
                if getattr(m_t, "has_uninitialized_params", lambda: False)():
                    with torch.no_grad():  # a lazy module: shapes from a dry run
                        m_t(*f.args, **f.kwargs)
                sd = {k: tg.from_numpy(v.detach().numpy().copy())
                      for k, v in m_t.state_dict().items()}
                m_g.load_state_dict(sd)
        except Exception as e:
            results.append((i, f"construction raised {type(e).__name__}: {str(e)[:100]}"))
            continue
        try:
            with H._quiet():
                out_t = m_t(*f.args, **f.kwargs)
        except Exception:
            continue
        try:
            with H._quiet():
                out_g = m_g(*fargs, **fkwargs)
        except Exception as e:
            results.append((i, f"forward raised {type(e).__name__}: {str(e)[:100]}"))
            continue
        reason = H.compare(out_g, out_t, torch.float64, values)
        if reason is None and values:
            bt = dict(m_t.named_buffers())
            for name, b in m_g.named_buffers():
                if name in bt:
                    r = H.compare(b, bt[name], torch.float64)
                    if r:
                        reason = f"buffer {name}: {r}"
                        break
        if reason is None and values:
            leaves = [(t, g) for t, g in zip(
                [a for a in torch.utils._pytree.tree_leaves((f.args, f.kwargs))
                 if isinstance(a, torch.Tensor) and a.requires_grad], [g for _, g in fargs_leaves])]
            names_t = dict(m_t.named_parameters())
            names_g = dict(m_g.named_parameters())
            common = [n for n in names_t if n in names_g]
            try:
                res = _grads(H.flat_outputs(out_t), H.flat_outputs(out_g),
                             [names_t[n] for n in common], [names_g[n] for n in common],
                             leaves, i)
            except Exception as e:
                res = None
                reason = f"backward raised {type(e).__name__}: {str(e)[:100]}"
            if res is not None:
                exp, got, wrt_t = res
                labels = [f"input {k}" for k in range(len(leaves))] + common
                for lab, a, b, w in zip(labels, got, exp, wrt_t):
                    if a is None and b is None:
                        continue
                    b = torch.zeros_like(w) if b is None else b
                    a = tg.zeros(tuple(b.shape), dtype=tg.float64) if a is None else a
                    r = H.compare(a, b, torch.float64)
                    if r:
                        reason = f"grad of {lab}: {r}"
                        break
        results.append((i, reason))
    return results


def entries():
    return [(mi, tg_class(mi)) for mi in module_db]


def main(argv):
    ok = n = have = passing = 0
    missing = []
    for mi, cls in entries():
        if cls is None:
            missing.append(mi.name)
            continue
        have += 1
        res = [(t, i, r) for t in (True, False) for i, r in run_module(mi, cls, t)]
        bad = [f"{'train' if t else 'eval'} #{i}: {r}" for t, i, r in res if r]
        total = len(res)
        n += total
        ok += total - len(bad)
        passing += not bad
        if bad:
            print(f"FAIL {mi.name}: {len(bad)} ({bad[0]})", flush=True)
    print(f"modules with a tapegrad class: {have}; missing: {len(missing)}: {' '.join(missing)}")
    print(f"inputs matching: {ok} / {n}; modules passing every input: {passing} / {have}")


if __name__ == "__main__":
    main(sys.argv[1:])
