"""Device boilerplate of real PyTorch programs runs unchanged: tg.device, `.to(device)`,
`.device`, `.cuda()` refused by name, torch.cuda / backends / accelerator answers on a
CPU-only machine, set_default_device, bfloat16, compile, matmul precision; snippets in
the style of nanoGPT's train.py/sample.py and PyTorch's examples, checked against torch."""
from contextlib import nullcontext

import numpy as np
import pytest
import torch

import tapegrad as tg
from _helpers import assert_close


def test_device_objects_match_torch():
    for args in [("cpu",), ("cpu", 0), ("cpu:0",), ("cuda",), ("cuda:1",), ("cuda", 2),
                 ("mps",)]:
        a, b = tg.device(*args), torch.device(*args)
        assert (repr(a), str(a), a.type, a.index) == (repr(b), str(b), b.type, b.index)
    assert tg.device("cpu") == tg.device("cpu") and tg.device("cpu") != tg.device("cuda")
    # as in torch, a device is not equal to its string
    assert (tg.device("cpu") == "cpu") is (torch.device("cpu") == "cpu") is False
    assert tg.device(tg.device("cuda:0")) == tg.device("cuda", 0)
    assert len({tg.device("cpu"), tg.device("cpu")}) == 1
    for lib in (torch, tg):  # a bare index means the accelerator's device: there is none
        with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
            lib.device(0)
    for bad in ["gpu", "cuda:x", "cuda:0:1"]:
        with pytest.raises(RuntimeError):
            torch.device(bad)
        with pytest.raises(RuntimeError):
            tg.device(bad)


def test_tensor_device_attributes_match_torch():
    a, b = tg.zeros(2), torch.zeros(2)
    assert a.device.type == b.device.type == "cpu" and str(a.device) == str(b.device)
    assert a.device == tg.device("cpu")
    assert repr(a.device) == repr(b.device)
    assert (a.is_cuda, a.is_cpu, a.get_device(), a.is_pinned()) == \
        (b.is_cuda, b.is_cpu, b.get_device(), b.is_pinned())


def test_to_device_dtype_other_and_keywords():
    x = tg.tensor([1.0, 2.0], requires_grad=True)
    dev = tg.device("cpu")
    assert x.to(dev) is x and x.to("cpu") is x and x.to("cpu", non_blocking=True) is x
    assert x.to(device=dev) is x and x.to(dev, tg.float32) is x
    assert x.to(dev, dtype=tg.float64).dtype == tg.float64
    assert x.to("cpu", tg.float64, True).dtype == tg.float64   # (device, dtype, non_blocking)
    assert x.to(tg.zeros(1, dtype=tg.float64)).dtype == tg.float64
    c = x.to(copy=True)
    assert c is not x and c.grad_fn is not None
    c.sum().backward()
    assert_close(x.grad, torch.ones(2))
    assert x.to("float64").dtype == tg.float64
    with pytest.raises(TypeError, match="unexpected keyword argument 'devcie'"):
        x.to(devcie="cpu")


@pytest.mark.parametrize("call", [
    lambda t: t.to("cuda"), lambda t: t.to(tg.device("cuda:0")), lambda t: t.to("mps"),
    lambda t: t.to(device="cuda"), lambda t: t.cuda(), lambda t: t.cuda(0),
    lambda t: tg.zeros(2, device="cuda"), lambda t: tg.tensor([1.0], device="mps"),
    lambda t: tg.randn(2, device=tg.device("cuda")), lambda t: tg.arange(3, device="cuda:0"),
    lambda t: tg.set_default_device("cuda"), lambda t: tg.nn.Linear(2, 2).to("cuda"),
    lambda t: tg.nn.Linear(2, 2).to(tg.device("mps")), lambda t: tg.Tensor(2, device="cuda"),
    lambda t: tg.LongTensor([1], device="cuda")])
def test_other_devices_are_refused_by_name(call):
    with pytest.raises(RuntimeError, match=r"device '(cuda|mps)[:0-9]*'.*CPU only"):
        call(tg.zeros(2))


def test_module_to_device_dtype_and_tensor():
    m = tg.nn.Linear(2, 2)
    assert m.to(tg.device("cpu")) is m and m.to("cpu", non_blocking=True) is m
    assert m.to(device="cpu", dtype=tg.float64).weight.dtype == tg.float64
    assert m.to(tg.zeros(1, dtype=tg.float32)).weight.dtype == tg.float32
    assert m.to("float64").weight.dtype == tg.float64


def test_creation_accepts_the_cpu():
    for dev in ("cpu", tg.device("cpu"), None):
        assert tg.zeros(2, 3, device=dev).shape == (2, 3)
        assert tg.tensor([1, 2], device=dev).dtype == tg.int64
        assert tg.arange(4, device=dev).device == tg.device("cpu")
    tg.set_default_device("cpu")
    tg.set_default_device(None)
    assert repr(tg.get_default_device()) == repr(torch.get_default_device())
    with tg.device("cpu"):
        assert tg.ones(1).device.type == "cpu"


def test_cuda_backends_accelerator_answers_match_cpu_only_torch():
    assert tg.cuda.is_available() is torch.cuda.is_available() is False
    assert tg.cuda.device_count() == torch.cuda.device_count() == 0
    assert tg.cuda.is_bf16_supported() is False
    assert tg.backends.mps.is_available() is torch.backends.mps.is_available() is False
    assert tg.accelerator.is_available() is torch.accelerator.is_available() is False
    assert tg.accelerator.current_accelerator() is torch.accelerator.current_accelerator()
    for f in (tg.cuda.manual_seed, tg.cuda.manual_seed_all):
        assert f(1337) is None
    tg.cuda.synchronize()
    tg.cuda.empty_cache()
    with pytest.raises(RuntimeError, match="CUDA is not available"):
        tg.cuda.get_device_name(0)


def test_backend_flags_keep_their_values():
    old = (tg.backends.cudnn.benchmark, tg.backends.cuda.matmul.allow_tf32,
           tg.backends.cudnn.allow_tf32, tg.backends.cudnn.deterministic)
    try:
        tg.backends.cudnn.benchmark = True
        tg.backends.cuda.matmul.allow_tf32 = True
        tg.backends.cudnn.allow_tf32 = True
        tg.backends.cudnn.deterministic = True
        assert tg.backends.cudnn.benchmark and tg.backends.cuda.matmul.allow_tf32
    finally:
        (tg.backends.cudnn.benchmark, tg.backends.cuda.matmul.allow_tf32,
         tg.backends.cudnn.allow_tf32, tg.backends.cudnn.deterministic) = old


def test_bfloat16_exists_and_is_refused_by_name():
    table = {"float32": tg.float32, "bfloat16": tg.bfloat16, "float16": tg.float16}
    assert repr(table["bfloat16"]) == "tapegrad.bfloat16"
    for make in (lambda: tg.zeros(2, dtype=tg.bfloat16), lambda: tg.ones(2).to(tg.bfloat16),
                 lambda: tg.tensor([1.0], dtype="bfloat16"), lambda: tg.BFloat16Tensor(2)):
        with pytest.raises(TypeError, match="bfloat16 is not supported"):
            make()


def test_compile_wraps_the_model_and_matmul_precision():
    model = tg.nn.Linear(3, 2)
    assert tg.compile(model)._orig_mod is model  # an OptimizedModule (tests/test_compile.py)
    assert tg.compile(model, mode="max-autotune")._orig_mod is model
    assert tg.compile(model, disable=True) is model

    @tg.compile
    def f(x):
        return x * 2

    @tg.compile(fullgraph=True)
    def g(x):
        return x * 3
    assert f(tg.ones(1)).item() == 2 and g(tg.ones(1)).item() == 3
    with pytest.raises(RuntimeError, match="mode"):
        tg.compile(model, mode="fastest")
    old = tg.get_float32_matmul_precision()
    try:
        tg.set_float32_matmul_precision("high")
        assert tg.get_float32_matmul_precision() == "high"
        with pytest.raises(RuntimeError, match="precision"):
            tg.set_float32_matmul_precision("low")
    finally:
        tg.set_float32_matmul_precision(old)


def test_manual_seed_returns_a_generator():
    g = tg.manual_seed(1337)
    assert isinstance(g, tg.Generator) and g.initial_seed() == 1337


# ---- snippets in the style of real programs -----------------------------------------------
def _nanogpt_style_setup(torch, compile):
    """Device/dtype setup as nanoGPT's train.py and sample.py write it."""
    device = "cpu"  # examples: 'cpu', 'cuda', 'cuda:0', 'mps'
    dtype = "bfloat16" if torch.cuda.is_available() and torch.cuda.is_bf16_supported() \
        else "float16"
    seed_offset = 0
    torch.manual_seed(1337 + seed_offset)
    torch.cuda.manual_seed(1337)
    torch.backends.cuda.matmul.allow_tf32 = True
    torch.backends.cudnn.allow_tf32 = True
    device_type = "cuda" if "cuda" in device else "cpu"
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16,
               "float16": torch.float16}[dtype]
    ctx = nullcontext() if device_type == "cpu" else torch.amp.autocast(
        device_type=device_type, dtype=ptdtype)
    scaler = torch.cuda.amp.GradScaler(enabled=(dtype == "float16"))
    data = np.arange(64, dtype=np.int64) % 13
    ix = [3, 17, 40]
    x = torch.stack([torch.from_numpy(data[i:i + 8].copy()) for i in ix])
    y = torch.stack([torch.from_numpy(data[i + 1:i + 9].copy()) for i in ix])
    if device_type == "cuda":
        x, y = x.pin_memory().to(device, non_blocking=True), y.pin_memory().to(
            device, non_blocking=True)
    else:
        x, y = x.to(device), y.to(device)
    model = torch.nn.Embedding(13, 13)
    with torch.no_grad():
        model.weight.copy_(torch.tensor(np.linspace(-1, 1, 169).reshape(13, 13)))
    model.to(device)
    if compile:
        model = torch.compile(model)  # requires PyTorch 2.0
    with ctx:
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits.view(-1, 13), y.view(-1))
    scaler.scale(loss).backward()
    return device_type, dtype, ptdtype, x.device, f"{loss:.4f}", model.weight.grad


@pytest.mark.filterwarnings("ignore:.*GradScaler")
def test_nanogpt_style_device_and_dtype_setup_runs_unchanged():
    # torch's own compile is not run here: it takes tens of seconds to build
    ours, theirs = _nanogpt_style_setup(tg, True), _nanogpt_style_setup(torch, False)
    assert ours[:2] == theirs[:2] == ("cpu", "float16")
    assert ours[2] == tg.float16 and str(ours[3]) == str(theirs[3]) == "cpu"
    assert ours[4] == theirs[4]
    with pytest.warns(UserWarning, match="CUDA is not available"):
        assert not tg.cuda.amp.GradScaler().is_enabled()
    assert_close(ours[5], theirs[5], rtol=1e-5, atol=1e-7)  # both scalers disabled


def _examples_style_mnist_step(torch):
    """`device = torch.device("cuda" if torch.cuda.is_available() else "cpu")`, then model
    and data moved with .to(device), as in PyTorch's examples."""
    use_cuda = torch.cuda.is_available()
    use_mps = torch.backends.mps.is_available()
    if use_cuda:
        device = torch.device("cuda")
    elif use_mps:
        device = torch.device("mps")
    else:
        device = torch.device("cpu")
    kwargs = {"num_workers": 1, "pin_memory": True} if use_cuda else {}
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(16, 4)).to(device)
    with torch.no_grad():
        model[1].weight.copy_(torch.tensor(np.linspace(-0.5, 0.5, 64).reshape(4, 16),
                                           dtype=torch.float32))
        model[1].bias.zero_()
    data = torch.tensor(np.linspace(0, 1, 32).reshape(2, 1, 4, 4), dtype=torch.float32)
    target = torch.tensor([1, 3])
    data, target = data.to(device), target.to(device)
    output = torch.nn.functional.log_softmax(model(data), dim=1)
    loss = torch.nn.functional.nll_loss(output, target)
    loss.backward()
    pred = output.argmax(dim=1, keepdim=True)
    correct = pred.eq(target.view_as(pred)).sum().item()
    line = "Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}".format(
        1, 2, 4, 100.0 * 2 / 4, loss.item())
    return str(device), kwargs, correct, line, model[1].weight.grad


def test_pytorch_examples_style_device_selection_runs_unchanged():
    ours, theirs = _examples_style_mnist_step(tg), _examples_style_mnist_step(torch)
    assert ours[:4] == theirs[:4]
    assert_close(ours[4], theirs[4], rtol=1e-5, atol=1e-6)
