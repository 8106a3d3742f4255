"""tg.optim.LBFGS vs torch.optim.LBFGS: steps from identical weights (with and without the
strong-Wolfe line search, float64 and float32), Rosenbrock minimisation, state-dict round
trips and torch's state dict, errors, the early return at a stationary point.
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _optim_helpers import _assert_same_tree, _close, _plain, _to_tg_state


# ---- LBFGS ------------------------------------------------------------------------------
def _lsq_data(dtype=np.float64):
    rng = np.random.default_rng(2)
    A = rng.standard_normal((12, 5)).astype(dtype)
    b = rng.standard_normal(12).astype(dtype)
    return A, b


def _lbfgs_pair(kwargs, dtype=np.float64):
    """A smooth convex-ish least-squares problem in a vector w and a 0-d scale s:
    0.5 |A w + 0.3 tanh(A w) - s b|^2 + 0.05 |w|^4 + (s - 1)^2. (Well conditioned on
    purpose: on a chaotic problem, lr=1 L-BFGS amplifies last-bit gradient differences.)
    Returns [(params, opt, closure, losses seen)] for tapegrad, then torch."""
    A, b = _lsq_data(dtype)
    rng = np.random.default_rng(3)
    w0 = (rng.standard_normal(5) * 0.5).astype(dtype)
    s0 = np.array(1.5, dtype)
    out = []
    for lib in (tg, torch):
        w = lib.tensor(w0.copy(), requires_grad=True)
        s = lib.tensor(s0.copy(), requires_grad=True)
        At, bt = lib.tensor(A), lib.tensor(b)
        opt = getattr(lib.optim, "LBFGS")([w, s], **kwargs)
        calls = []

        def closure(lib=lib, w=w, s=s, At=At, bt=bt, opt=opt, calls=calls):
            opt.zero_grad()
            r = At @ w + 0.3 * lib.tanh(At @ w) - bt * s
            loss = 0.5 * (r * r).sum() + 0.05 * ((w * w).sum()) ** 2 + (s - 1) ** 2
            loss.backward()
            calls.append(float(loss.detach()))
            return loss
        out.append(([w, s], opt, closure, calls))
    return out


LBFGS_CASES = [
    dict(),
    dict(line_search_fn="strong_wolfe"),
    dict(lr=0.5, max_iter=5),
    dict(lr=0.8, max_iter=4, history_size=2),
    dict(max_iter=7, history_size=3, line_search_fn="strong_wolfe"),
    dict(lr=1.0, max_iter=3, max_eval=5, line_search_fn="strong_wolfe"),
    dict(tolerance_change=1e-4, tolerance_grad=1e-3),
]


@pytest.mark.parametrize("kwargs", LBFGS_CASES, ids=[str(i) for i in range(len(LBFGS_CASES))])
def test_lbfgs_steps_match_torch(kwargs):
    (pa, oa, ca, calls_a), (pb, ob, cb, calls_b) = _lbfgs_pair(kwargs)
    for _ in range(4):
        la = oa.step(ca)
        lb = ob.step(cb)
        assert isinstance(la, tg.Tensor)  # the first closure's loss, as torch returns it
        np.testing.assert_allclose(float(la), float(lb.detach()), rtol=1e-10)
    _close(pa, pb, np.float64)
    # The same number of closure calls, at the same losses (the line search took the
    # same path), and the same counters in the state.
    assert len(calls_a) == len(calls_b)
    np.testing.assert_allclose(calls_a, calls_b, rtol=1e-9, atol=1e-12)
    sa, sb = oa.state[pa[0]], ob.state[pb[0]]
    assert (sa["n_iter"], sa["func_evals"]) == (sb["n_iter"], sb["func_evals"])
    assert len(sa["old_dirs"]) == len(sb["old_dirs"])


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_float32(line_search_fn):
    (pa, oa, ca, _), (pb, ob, cb, _) = _lbfgs_pair(dict(max_iter=5,
                                                        line_search_fn=line_search_fn),
                                                   dtype=np.float32)
    oa.step(ca)
    ob.step(cb)
    _close(pa, pb, np.float32)
    assert pa[1].data.shape == ()


def test_lbfgs_minimises_rosenbrock_like_torch():
    """The classic test problem: strong Wolfe L-BFGS reaches the minimum (1, 1)."""
    out = []
    for lib in (tg, torch):
        x = lib.tensor(np.array([-1.5, 2.0]), requires_grad=True)
        opt = lib.optim.LBFGS([x], lr=1, max_iter=100, line_search_fn="strong_wolfe")

        def closure(x=x, opt=opt):
            opt.zero_grad()
            loss = (1 - x[0]) ** 2 + 100 * (x[1] - x[0] ** 2) ** 2
            loss.backward()
            return loss
        for _ in range(3):
            opt.step(closure)
        out.append(x.detach().numpy() if lib is torch else x.data)
    np.testing.assert_allclose(out[0], [1.0, 1.0], atol=1e-4)
    np.testing.assert_allclose(out[0], out[1], rtol=1e-8, atol=1e-10)


def test_lbfgs_state_dict_round_trip(tmp_path):
    kwargs = dict(max_iter=3, history_size=4, line_search_fn="strong_wolfe")
    (pa, oa, ca, _), (pb, ob, cb, _) = _lbfgs_pair(kwargs)
    for _ in range(2):
        oa.step(ca)
        ob.step(cb)
    sd_a, sd_b = _plain(oa.state_dict()), _plain(ob.state_dict())
    assert set(sd_a["state"][0]) == set(sd_b["state"][0])
    for key in ("d", "prev_flat_grad", "old_dirs", "old_stps", "ro", "H_diag",
                "n_iter", "func_evals", "prev_loss"):
        _assert_same_tree(sd_a["state"][0][key], sd_b["state"][0][key], key)
    tg.save({"opt": oa.state_dict()}, tmp_path / "lbfgs.npz")
    loaded = tg.load(tmp_path / "lbfgs.npz")
    (qa, oc, cc, _), _ = _lbfgs_pair(kwargs)
    for p, q in zip(qa, pa):
        p.data[...] = q.data
    oc.load_state_dict(loaded["opt"])
    oc.step(cc)
    ob.step(cb)
    _close(qa, pb, np.float64)


def test_lbfgs_loads_torch_state_dict_and_continues():
    kwargs = dict(max_iter=4, history_size=3, line_search_fn="strong_wolfe")
    (pa, oa, ca, _), (pb, ob, cb, _) = _lbfgs_pair(kwargs)
    for _ in range(2):
        ob.step(cb)
    for p, q in zip(pa, pb):
        p.data[...] = q.detach().numpy()
    oa.load_state_dict(_to_tg_state(ob.state_dict()))
    for _ in range(2):
        oa.step(ca)
        ob.step(cb)
    _close(pa, pb, np.float64)
    assert oa.state[pa[0]]["n_iter"] == ob.state[pb[0]]["n_iter"]


def test_lbfgs_errors():
    a, b = tg.zeros(2, requires_grad=True), tg.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="per-parameter options"):
        tg.optim.LBFGS([{"params": [a]}, {"params": [b], "lr": 0.1}])
    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        tg.optim.LBFGS([a], line_search_fn="armijo")
    with pytest.raises(TypeError, match="needs a closure"):
        tg.optim.LBFGS([a]).step(None)
    assert tg.optim.LBFGS([a], max_iter=8).defaults["max_eval"] == 10  # max_iter * 5 // 4


def test_lbfgs_returns_early_at_a_stationary_point():
    x = tg.tensor([0.0, 0.0], requires_grad=True)
    opt = tg.optim.LBFGS([x])

    def closure():
        opt.zero_grad()
        loss = (x * x).sum()
        loss.backward()
        return loss
    assert float(opt.step(closure)) == 0.0
    assert opt.state[x]["func_evals"] == 1 and opt.state[x]["n_iter"] == 0
