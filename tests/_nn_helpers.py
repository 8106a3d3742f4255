"""Shared helpers for the nn tests: copy weights into torch, compare values and grads."""
import numpy as np
import torch

import tapegrad as tg

TOL = {np.float64: dict(rtol=1e-10, atol=1e-12), np.float32: dict(rtol=1e-5, atol=1e-5)}
TDT = {np.float64: torch.float64, np.float32: torch.float32}


def copy_to_torch(tg_mod, th_mod):
    """Load tapegrad's parameters and buffers into the torch module (same names)."""
    sd = {k: torch.tensor(np.array(v.data)) for k, v in tg_mod.state_dict().items()}
    th_mod.load_state_dict(sd)
    return th_mod


def close(a, b, dtype, what=""):
    a = np.asarray(a.data if isinstance(a, tg.Tensor) else a)
    b = b.detach().numpy() if isinstance(b, torch.Tensor) else np.asarray(b)
    assert a.shape == b.shape, f"{what}: shape {a.shape} vs torch {b.shape}"
    np.testing.assert_allclose(a, b, err_msg=what, **TOL[dtype])


def compare_module(tg_mod, th_mod, x, dtype=np.float64, int_input=False, steps=1,
                   cotangent_seed=0):
    """Forward and backward in both libraries from identical weights; compare the
    output, the input gradient, every parameter gradient and every buffer."""
    if dtype == np.float64:
        tg_mod.double()
        th_mod.double()
    copy_to_torch(tg_mod, th_mod)
    rng = np.random.default_rng(cotangent_seed)
    for step in range(steps):
        if int_input:
            xt, xth = tg.tensor(x), torch.tensor(x)
        else:
            xa = np.asarray(x, dtype=dtype)
            xt = tg.tensor(xa, requires_grad=True)
            xth = torch.tensor(xa, requires_grad=True)
        out, oth = tg_mod(xt), th_mod(xth)
        close(out, oth, dtype, f"{type(tg_mod).__name__} output (step {step})")
        cot = rng.standard_normal(tuple(oth.shape)).astype(dtype)
        out.backward(tg.tensor(cot))
        oth.backward(torch.tensor(cot))
        if not int_input:
            close(xt.grad, xth.grad, dtype, f"{type(tg_mod).__name__} input grad")
        tp = dict(th_mod.named_parameters())
        for name, p in tg_mod.named_parameters():
            if tp[name].grad is None:
                assert p.grad is None or not np.any(p.grad.data), name
                continue
            close(p.grad, tp[name].grad, dtype, f"{type(tg_mod).__name__} grad of {name}")
        tb = dict(th_mod.named_buffers())
        for name, b in tg_mod.named_buffers():
            close(b, tb[name], dtype, f"{type(tg_mod).__name__} buffer {name}")
    return out, oth
