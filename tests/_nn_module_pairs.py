"""Comparing a tapegrad nn function or module with torch's: values, the input gradient and
the parameter gradients of a random cotangent (float64 tight, float32 loose).
"""
import numpy as np
import torch

import tapegrad as tg


TOL = {np.float64: dict(rtol=1e-10, atol=1e-12), np.float32: dict(rtol=1e-5, atol=1e-5)}


def _np(t):
    return t.detach().numpy() if isinstance(t, torch.Tensor) else np.asarray(t.numpy(force=True))


def _close(a, b, dtype, what):
    a, b = _np(a), _np(b)
    assert a.shape == b.shape, f"{what}: {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, err_msg=what, **TOL[dtype])


def _grads_match(fn, tfn, x, dtype, what, params=()):
    """fn(Tensor) and tfn(torch.Tensor) from the same array: output and input grad."""
    a = tg.tensor(x.astype(dtype), requires_grad=True)
    ta = torch.tensor(x.astype(dtype), requires_grad=True)
    out, tout = fn(a), tfn(ta)
    _close(out, tout, dtype, what + " output")
    c = np.random.default_rng(9).standard_normal(tuple(tout.shape)).astype(dtype)
    out.backward(tg.tensor(c))
    tout.backward(torch.tensor(c))
    _close(a.grad, ta.grad, dtype, what + " input grad")
    return out, tout


def _module_pair(ours, theirs, x, dtype, what):
    if dtype == np.float64:
        ours.double()
        theirs.double()
    ka = [(k, tuple(v.shape)) for k, v in ours.state_dict().items()]
    kb = [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    assert ka == kb, what
    # non-trivial weights, the same in both
    rng = np.random.default_rng(1)
    sd = {k: rng.standard_normal(tuple(v.shape)) for k, v in ours.state_dict().items()}
    ours.load_state_dict(sd)
    theirs.load_state_dict({k: torch.tensor(v.astype(dtype)) for k, v in sd.items()})
    _grads_match(ours, theirs, x, dtype, what)
    tp = dict(theirs.named_parameters())
    for n, p in ours.named_parameters():
        _close(p.grad, tp[n].grad, dtype, f"{what} grad of {n}")
