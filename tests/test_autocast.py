"""tg.autocast (torch.autocast, torch.amp / cpu.amp / cuda.amp autocast) against torch: the
per-thread state programs read back, nesting, the decorator, the warnings that disable a
region and the errors, custom_fwd/custom_bwd; and a build-nanogpt-style training step in
an autocast region, whose loss and gradients agree with torch's autocast ones to
bfloat16's precision (tapegrad computes the region in float32: amp/autocast_mode.py)."""
import threading
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import error_of
from _snippets import assert_same_output

_OURS = "tapegrad.autocast: ops inside autocast run in full precision"


def _caught(fn):
    """(fn's result, [(category name, message)] of the warnings it gave, ours left out)."""
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = fn()
    return out, [(w.category.__name__, str(w.message).replace("tapegrad.", "torch."))
                 for w in got if not str(w.message).startswith(_OURS)]


def state_program(torch, print):
    print(torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"),
          torch.get_autocast_dtype("cpu"), torch.get_autocast_dtype("cuda"))
    with torch.autocast(device_type="cpu", dtype=torch.bfloat16):
        print("in", torch.is_autocast_enabled(), torch.is_autocast_enabled("cpu"),
              torch.get_autocast_dtype("cpu"))
        with torch.autocast("cpu", dtype=torch.float16):
            print("nested", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
            with torch.autocast("cpu", enabled=False):
                print("disabled", torch.is_autocast_enabled("cpu"),
                      torch.get_autocast_dtype("cpu"))
            print("back", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
        print("back", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    print("out", torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu"))
    with torch.amp.autocast("cpu", cache_enabled=False):
        print("cache", torch.is_autocast_cache_enabled())
    print("cache", torch.is_autocast_cache_enabled())

    @torch.autocast(device_type="cpu")
    def inside(x):
        return torch.is_autocast_enabled("cpu"), x

    print("decorated", inside(3), torch.is_autocast_enabled("cpu"))
    try:
        with torch.autocast("cpu"):
            raise KeyError("boom")
    except KeyError:
        print("after an error", torch.is_autocast_enabled("cpu"))
    print([torch.amp.is_autocast_available(d) for d in ("cpu", "cuda", "mps", "xpu", "meta")])
    print(torch.autocast is torch.amp.autocast)


def test_state_as_torch():
    _, ours = _caught(lambda: assert_same_output(state_program))
    assert ours == []


@pytest.mark.parametrize("make", [
    lambda L: L.autocast("cuda"),
    lambda L: L.autocast("cpu", dtype=L.float64),
    lambda L: L.autocast("cpu", dtype=L.float32),
    lambda L: L.cpu.amp.autocast(),
    lambda L: L.cpu.amp.autocast(dtype=L.float16),
    lambda L: L.cuda.amp.autocast(),
    lambda L: L.autocast("cuda", enabled=False),
], ids=["cuda", "cpu-f64", "cpu-f32", "cpu.amp", "cpu.amp-f16", "cuda.amp", "cuda-off"])
def test_warnings_and_disabling_as_torch(make):
    def enter(L, mod):
        region, said = _caught(lambda: make(L))
        with region:
            state = (L.is_autocast_enabled("cpu"), L.is_autocast_enabled("cuda"),
                     str(L.get_autocast_dtype(region.device)))
        return said, state
    (theirs, t_state), (ours, o_state) = enter(torch, torch), enter(tg, tg)
    assert ours == theirs
    assert o_state == tuple(s.replace("torch", "tapegrad") if isinstance(s, str) else s
                            for s in t_state)


@pytest.mark.parametrize("call", [
    lambda L: L.autocast(L.device("cpu")),
    lambda L: L.autocast("foo"),
    lambda L: L.autocast("meta"),
    lambda L: L.autocast("cpu")(3),
    lambda L: L.amp.custom_fwd(device_type=L.device("cpu")),
    lambda L: L.amp.custom_bwd(lambda ctx: None, device_type=0),
], ids=["device-object", "unknown", "meta", "decorate-int", "custom_fwd", "custom_bwd"])
def test_errors_as_torch(call):
    want = error_of(lambda: call(torch))
    got = error_of(lambda: call(tg))
    assert want is not None and got is not None
    assert got[0] == want[0]
    if want[1].startswith("Expected one of"):  # torch lists more device types than we know
        assert got[1].startswith("Expected one of") and got[1].endswith("foo")
    elif want[1] == "unsupported scalarType":  # (torch's meta: ours names the device type)
        assert got[1] == "User specified an unsupported autocast device_type 'meta'"
    else:
        assert got[1].replace("tapegrad._device.device", "torch.device") == want[1]


def test_is_autocast_cpu_enabled_deprecated():
    for L in (torch, tg):
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            with L.autocast("cpu"):
                assert L.is_autocast_cpu_enabled() is True
        assert any(w.category is DeprecationWarning for w in got)


def test_state_is_per_thread_as_torch():
    def run(L):
        seen = []
        with L.autocast("cpu"):
            t = threading.Thread(target=lambda: seen.append(L.is_autocast_enabled("cpu")))
            t.start()
            t.join()
            seen.append(L.is_autocast_enabled("cpu"))
        return seen
    assert run(tg) == run(torch) == [False, True]


def _custom_functions(L, seen):
    """A Function whose forward casts its inputs (autocast off inside), and one that keeps
    the region's state; both note the state their forward and backward saw."""
    class Cast(L.autograd.Function):
        @staticmethod
        @L.amp.custom_fwd(device_type="cpu", cast_inputs=L.float32)
        def forward(ctx, x):
            seen.append(("cast fwd", L.is_autocast_enabled("cpu"), ctx._fwd_used_autocast))
            return x * 3

        @staticmethod
        @L.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen.append(("cast bwd", L.is_autocast_enabled("cpu")))
            return g * 3

    class Keep(L.autograd.Function):
        @staticmethod
        @L.amp.custom_fwd(device_type="cpu")
        def forward(ctx, x):
            seen.append(("keep fwd", L.is_autocast_enabled("cpu"), ctx._fwd_used_autocast))
            return x * 2

        @staticmethod
        @L.amp.custom_bwd(device_type="cpu")
        def backward(ctx, g):
            seen.append(("keep bwd", L.is_autocast_enabled("cpu")))
            return g * 2
    return Cast, Keep


def test_custom_fwd_bwd_as_torch():
    def run(L):
        seen = []
        for fn in _custom_functions(L, seen):
            x = L.ones(3, requires_grad=True)
            with L.autocast("cpu", dtype=L.float16):  # (float16: torch's cast keeps 3.0)
                y = fn.apply(x)
            y.sum().backward()
            seen.append((y.float().detach().numpy().tolist(), x.grad.numpy().tolist()))
        return seen
    ours, _ = _caught(lambda: run(tg))
    assert ours == run(torch)


def test_full_precision_warning_once(monkeypatch):
    from tapegrad.amp import autocast_mode
    monkeypatch.setattr(autocast_mode, "_warned", [])
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        for _ in range(3):
            with tg.autocast("cpu"):
                pass
        with tg.autocast("cpu", enabled=False):
            pass
    ours = [w for w in got if str(w.message).startswith(_OURS)]
    assert len(ours) == 1 and "bfloat16" in str(ours[0].message)
    assert ours[0].filename == __file__  # points at the user's `with` line


def _nanogpt_step(L, weights, x, y, region):
    """build-nanogpt's step: logits, loss = model(x, y) under autocast; loss.backward()."""
    w1, b1, w2, b2 = (L.tensor(w, requires_grad=True) for w in weights)
    with region(L):
        h = L.nn.functional.gelu(L.nn.functional.linear(L.tensor(x), w1, b1))
        logits = L.nn.functional.linear(h, w2, b2)
        loss = L.nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), L.tensor(y))
    loss.backward()
    return loss.item(), [w.grad.float().numpy() for w in (w1, b1, w2, b2)], logits.dtype


def test_nanogpt_style_step_agrees_with_torch_autocast():
    r = np.random.default_rng(0)
    weights = [r.standard_normal((64, 32)).astype(np.float32) * 0.2,
               np.zeros(64, np.float32),
               r.standard_normal((27, 64)).astype(np.float32) * 0.2,
               np.zeros(27, np.float32)]
    x = r.standard_normal((8, 16, 32)).astype(np.float32)
    y = r.integers(0, 27, 8 * 16)
    region = lambda L: L.autocast(device_type="cpu", dtype=L.bfloat16)  # noqa: E731
    plain = lambda L: L.autocast(device_type="cpu", enabled=False)  # noqa: E731
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        ours = _nanogpt_step(tg, weights, x, y, region)
    theirs = _nanogpt_step(torch, weights, x, y, region)
    theirs32 = _nanogpt_step(torch, weights, x, y, plain)
    # torch's region computed the linears in bfloat16; ours in float32, as torch without it
    assert theirs[2] == torch.bfloat16 and ours[2] == tg.float32
    np.testing.assert_allclose(ours[0], theirs32[0], rtol=1e-5)
    np.testing.assert_allclose(ours[0], theirs[0], rtol=2e-2)
    for a, b, c in zip(ours[1], theirs[1], theirs32[1]):
        np.testing.assert_allclose(a, c, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(a, b, rtol=0.1, atol=0.02 * np.abs(b).max())
