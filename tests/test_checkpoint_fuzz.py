"""Fuzz a small checkpoint: every single-bit flip and every truncation must give either
a RuntimeError naming the file or a load identical to the original, never anything else
(no MemoryError, OverflowError, RecursionError, KeyError, silent different numbers)."""
import math

import numpy as np
import pytest

import tapegrad as tg


def _checkpoint():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(3, 2), tg.nn.BatchNorm1d(2))
    opt = tg.optim.Adam(model[0].parameters(), lr=1e-3)
    tg.nn.functional.mse_loss(model(tg.randn(5, 3)), tg.zeros(5, 2)).backward()
    opt.step()
    w = tg.randn(2, 3)
    return {"model": model.state_dict(), "optimizer": opt.state_dict(),
            "config": {"lr": 1e-3, "name": "mlp", "flag": True, "none": None,
                       "inf": math.inf, "sizes": (3, 4, 2)},
            "tied": w, "tied2": w, "view": w[1:], "empty": tg.zeros(0, 2), "step": 7}


def _same(a, b):
    if type(a) is not type(b):
        return False
    if isinstance(a, tg.Tensor):
        return (a.dtype == b.dtype and a.shape == b.shape and a.requires_grad ==
                b.requires_grad and a.numpy(force=True).tobytes() == b.numpy(force=True).tobytes())
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()
    if isinstance(a, dict):
        return list(a) == list(b) and all(type(k) is type(j) for k, j in zip(a, b)) and \
            all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "ck.safetensors"
    obj = _checkpoint()
    tg.save(obj, path)
    raw = path.read_bytes()
    assert 1000 < len(raw) < 5000  # a few KB: thousands of loads stay quick
    assert _same(tg.load(path), obj)
    return obj, raw


def _check(path, data, obj, what):
    path.write_bytes(data)
    try:
        out = tg.load(path)
    except RuntimeError as e:
        assert str(path) in str(e), f"{what}: error does not name the file: {e}"
        return "error"
    except Exception as e:  # noqa: BLE001 - the point of the test
        raise AssertionError(f"{what}: {type(e).__name__}: {e}") from None
    assert _same(out, obj), f"{what}: loaded something different without an error"
    return "same"


def test_bit_flips_at_every_offset(original, tmp_path):
    # Every byte gets a flip, in bit i % 8 (so each bit position is hit all over the
    # file); the 8 length bytes, the first header bytes and the last data bytes get all
    # 8. Every bit of every byte would be 8x the loads for little more coverage.
    obj, raw = original
    path = tmp_path / "flipped.safetensors"
    seen = {"error": 0, "same": 0}
    header_end = 8 + int.from_bytes(raw[:8], "little")
    regions = set()
    for i in range(len(raw)):
        every = i < 40 or i >= len(raw) - 16 or header_end - 4 <= i < header_end + 4
        for bit in range(8) if every else [i % 8]:
            data = bytearray(raw)
            data[i] ^= 1 << bit
            seen[_check(path, bytes(data), obj, f"bit {bit} of byte {i}")] += 1
        regions.add("length" if i < 8 else "header" if i < header_end else "data")
    assert regions == {"length", "header", "data"}
    assert seen["error"] > 0.9 * len(raw)  # "same": e.g. a flip in the header padding


def test_every_truncation(original, tmp_path):
    obj, raw = original
    path = tmp_path / "cut.safetensors"
    for n in range(len(raw)):
        assert _check(path, raw[:n], obj, f"cut at {n}") == "error"


def test_appended_garbage_and_byte_swaps(original, tmp_path):
    obj, raw = original
    path = tmp_path / "odd.safetensors"
    for tail in (b"\0", b"x" * 100):
        _check(path, raw + tail, obj, "appended")
    rng = np.random.default_rng(0)
    for _ in range(300):  # random multi-byte damage
        data = bytearray(raw)
        for i in rng.integers(0, len(raw), size=3):
            data[i] = int(rng.integers(0, 256))
        _check(path, bytes(data), obj, "random bytes")


def test_old_npz_format_bit_flips_and_truncations(tmp_path):
    # The read-only format-1 reader holds to the same rule (zip CRCs guard the members).
    import os
    src = os.path.join(os.path.dirname(__file__), "data", "checkpoint_v1.npz")
    with open(src, "rb") as fh:
        raw = fh.read()
    obj = tg.load(src)
    path = tmp_path / "old.npz"
    for i in range(0, len(raw), 3):
        data = bytearray(raw)
        data[i] ^= 1 << (i % 8)
        _check(path, bytes(data), obj, f"bit {i % 8} of byte {i}")
    for n in range(0, len(raw), 5):
        assert _check(path, raw[:n], obj, f"cut at {n}") == "error"
