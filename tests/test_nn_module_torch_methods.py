"""nn.Module has torch's methods: `dir(nn.Module)` lacks none of torch's public names
nor the commonly overridden private ones (the few left out are listed with a reason);
the device methods refuse as Tensor.cuda() does; full backward hooks, state-dict hooks
and `_save_to_state_dict` / `_load_from_state_dict` overrides behave as torch's, the same
code run on both."""
import warnings

import numpy as np
import pytest
import torch

import tapegrad as tg

# torch's Module names tapegrad leaves out on purpose, and why
INTENTIONALLY_ABSENT = {
    "_maybe_warn_non_full_backward_hook": "torch's warning for its partial backward hooks; "
                                          "tapegrad's backward hooks are all full ones",
    "_replicate_for_data_parallel": "nn.DataParallel's per-GPU replicas: no GPUs here",
    "_slow_forward": "TorchScript tracing's forward: tapegrad has no TorchScript",
}


def test_dir_of_module_has_torchs_names():
    # (names torch.testing adds to torch.nn.Module when its databases are imported: "___...")
    missing = {n for n in set(dir(torch.nn.Module)) - set(dir(tg.nn.Module))
               if not n.startswith("___")}
    assert missing == set(INTENTIONALLY_ABSENT), sorted(missing ^ set(INTENTIONALLY_ABSENT))
    for name in INTENTIONALLY_ABSENT:
        assert hasattr(torch.nn.Module, name)  # the list must not go stale


@pytest.mark.parametrize("method", ["cuda", "xpu", "ipu", "mtia"])
def test_device_methods_refuse_like_tensor_cuda(method):
    m = tg.nn.Linear(2, 2)
    with pytest.raises(RuntimeError) as info:
        getattr(m, method)()
    assert str(info.value) == (f"Module.{method}(): device '{method}' is not available: "
                               "tapegrad runs on the CPU only (use device='cpu'; "
                               "torch.cuda.is_available() is False here)")
    with pytest.raises(RuntimeError, match=r"Tensor.cuda\(\): device 'cuda' is not available"):
        tg.ones(1).cuda()
    assert m.cpu() is m


def test_bfloat16_is_refused_with_the_dtype_error():
    with pytest.raises(TypeError, match="dtype bfloat16 is not supported"):
        tg.nn.Linear(2, 2).bfloat16()


def _twin_linear():
    rng = np.random.default_rng(0)
    w, b = rng.standard_normal((3, 4)), rng.standard_normal(3)
    mods = []
    for lib in (tg, torch):
        m = lib.nn.Linear(4, 3).double()
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
            m.bias.copy_(lib.tensor(b))
        mods.append(m)
    return mods, rng.standard_normal((5, 4))


@pytest.mark.parametrize("x_grad", [True, False])
def test_full_backward_hooks_see_and_replace_gradients_like_torch(x_grad):
    (tm, rm), x = _twin_linear()
    seen = {}
    for lib, m in (("tg", tm), ("torch", rm)):
        log = seen[lib] = []

        def pre(mod, grad_output, log=log):
            log.append(("pre", [g.detach().numpy().copy() for g in grad_output]))
            return tuple(g * 2 for g in grad_output)

        def post(mod, grad_input, grad_output, log=log):
            log.append(("post", [None if g is None else g.detach().numpy().copy()
                                 for g in grad_input],
                        [g.detach().numpy().copy() for g in grad_output]))
            if grad_input[0] is not None:
                return (grad_input[0] + 1,)

        m.register_full_backward_pre_hook(pre)
        h = m.register_full_backward_hook(post)
        lib_ = tg if lib == "tg" else torch
        xt = lib_.tensor(x, requires_grad=x_grad)
        out = m(xt)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            (out * lib_.arange(3.0, dtype=lib_.float64)).sum().backward()
        log.append(("warnings", [str(w.message) for w in caught]))
        log.append(("grads", m.weight.grad.numpy().copy(),
                    None if xt.grad is None else xt.grad.numpy().copy()))
        h.remove()
        m.zero_grad()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            m(lib_.tensor(x)).sum().backward()     # removed: only the pre hook runs
        log.append(("warnings", [str(w.message) for w in caught]))
        log.append(("after remove", m.weight.grad.numpy().copy()))
    assert [e[0] for e in seen["tg"]] == [e[0] for e in seen["torch"]]
    for a, b in zip(seen["tg"], seen["torch"]):
        for u, v in zip(a[1:], b[1:]):
            if isinstance(u, list) and u and isinstance(u[0], str):
                assert u == v
            elif isinstance(u, list):
                assert len(u) == len(v)
                for p, q in zip(u, v):
                    assert (p is None) == (q is None)
                    if p is not None:
                        np.testing.assert_allclose(p, q, rtol=1e-12)
            elif u is None or v is None:
                assert u is None and v is None
            else:
                np.testing.assert_allclose(u, v, rtol=1e-12)


class _Renamed:
    """The same subclass code for both libraries: an old checkpoint key renamed on load,
    an extra key saved, and every state-dict hook."""

    @staticmethod
    def build(lib):
        class Old(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = lib.nn.Linear(2, 2)
                self.register_buffer("count", lib.zeros(1))

            def _save_to_state_dict(self, destination, prefix, keep_vars):
                super()._save_to_state_dict(destination, prefix, keep_vars)
                destination[prefix + "version_marker"] = lib.ones(1)

            def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                                      missing_keys, unexpected_keys, error_msgs):
                state_dict.pop(prefix + "version_marker", None)
                if prefix + "old_count" in state_dict:
                    state_dict[prefix + "count"] = state_dict.pop(prefix + "old_count")
                super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                              missing_keys, unexpected_keys, error_msgs)
        return Old()


def test_state_dict_overrides_and_hooks_like_torch():
    results = {}
    for name, lib in (("tg", tg), ("torch", torch)):
        m = _Renamed.build(lib)
        calls = []
        m.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(
            ("pre", prefix)))
        m.lin.register_state_dict_pre_hook(lambda mod, prefix, keep_vars: calls.append(
            ("pre lin", prefix)))
        m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: calls.append(
            ("post", sorted(sd))))
        sd = m.state_dict()
        keys = list(sd)
        sd = dict(sd)
        sd["old_count"] = sd.pop("count") + 5
        m.register_load_state_dict_pre_hook(
            lambda mod, sd, prefix, *rest: calls.append(("load pre", "old_count" in sd)))
        m.register_load_state_dict_post_hook(
            lambda mod, keys: calls.append(("load post", list(keys.missing_keys),
                                            list(keys.unexpected_keys))))
        res = m.load_state_dict(sd)
        results[name] = (keys, calls, m.count.tolist(), list(res.missing_keys),
                         list(res.unexpected_keys), m.get_buffer("count").tolist())
    assert results["tg"] == results["torch"]


def test_get_buffer_set_submodule_to_empty_apply_compile():
    for lib in (tg, torch):
        m = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3))
        assert m.get_buffer("1.running_mean") is m[1].running_mean
        with pytest.raises(AttributeError, match="BatchNorm1d has no attribute `nope`"):
            m.get_buffer("1.nope")
        with pytest.raises(AttributeError, match="`weight` is not a buffer"):
            m.get_buffer("1.weight")
        new = lib.nn.Linear(2, 3)
        m.set_submodule("0", new)
        assert m[0] is new
        with pytest.raises(AttributeError):
            m.set_submodule("5", lib.nn.ReLU(), strict=True)
        w = m[0].weight
        m.to_empty(device="cpu")
        assert m[0].weight is w and tuple(w.shape) == (3, 2)
        m._apply(lambda t: t * 0)
        assert m[0].weight is w and float(w.detach().abs().sum()) == 0.0
    with pytest.raises(RuntimeError, match="Module.to_empty"):
        tg.nn.Linear(2, 2).to_empty(device="cuda")
    m = tg.nn.Linear(3, 2)
    x = tg.randn(4, 3)
    want = m(x).detach().numpy()
    assert m.compile() is None and m._compiled_call_impl is not None
    np.testing.assert_allclose(m(x).detach().numpy(), want, rtol=1e-6)
    assert tg.nn.Module._call_impl is tg.nn.Module.__call__
