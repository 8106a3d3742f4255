"""Run a program written against `torch` twice, with torch and with tapegrad, and
compare what it printed (tests/test_real_snippets_*.py).

A program is a function `program(torch, print)`: its body reads as the PyTorch code it
imitates (the parameter is named `torch`). The printed text must agree token by token
after "tapegrad" is read as "torch" (`tapegrad.float32` is what the user sees for
`torch.float32`); numbers agree to `rtol` (float32 results may differ in the last
digits when the two libraries sum in a different order), object addresses are ignored.
"""
import io
import re

import numpy as np
import torch

import tapegrad as tg

_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?%?$")
_TOKEN = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:e[-+]?\d+)?|0x[0-9a-f]+|\s+|[^\s\d.+-]+|.")


def output(program, lib):
    buf = io.StringIO()

    def p(*args, **kw):
        print(*args, **kw, file=buf)

    if lib is tg:
        tg.manual_seed(0)
    else:
        torch.manual_seed(0)
    program(lib, p)
    return buf.getvalue().replace("tapegrad", "torch")


def _tokens(text):
    return [t for t in _TOKEN.findall(re.sub(r"0x[0-9a-f]+", "0x", text)) if not t.isspace()]


def assert_same_output(program, rtol=1e-4, atol=1e-6):
    """Both libraries print the same text (numbers within rtol/atol)."""
    want, got = output(program, torch), output(program, tg)
    tw, tt = _tokens(want), _tokens(got)
    assert len(tw) == len(tt), f"torch printed:\n{want}\ntapegrad printed:\n{got}"
    for a, b in zip(tw, tt):
        if a == b:
            continue
        if _NUMBER.match(a) and _NUMBER.match(b):
            np.testing.assert_allclose(float(b.rstrip("%")), float(a.rstrip("%")), rtol=rtol,
                                       atol=atol, err_msg=f"torch:\n{want}\ntapegrad:\n{got}")
            continue
        raise AssertionError(f"{b!r} where torch prints {a!r}\ntorch printed:\n{want}\n"
                             f"tapegrad printed:\n{got}")
    return want


def fill_parameters(torch, module, scale=0.3):
    """Deterministic parameters for `module` of library `torch` (the two libraries'
    random streams differ): sin(0.7 k + i) * scale for the k-th value of parameter i."""
    with torch.no_grad():
        for i, p in enumerate(module.parameters()):
            vals = np.sin(np.arange(p.numel()) * 0.7 + i).reshape(tuple(p.shape)) * scale
            p.copy_(torch.from_numpy(vals))


def fill_parameters_float32(torch, model, scale=0.1):
    """Every parameter of `model` from a fixed formula computed by library `torch` in
    float32, sin(0.7 k + i) * scale, so both libraries start from the same weights."""
    with torch.no_grad():
        for k, p in enumerate(model.parameters()):
            n = p.numel()
            vals = torch.sin(torch.arange(n, dtype=torch.float32) * 0.7 + k) * scale
            p.copy_(vals.view(p.shape))
