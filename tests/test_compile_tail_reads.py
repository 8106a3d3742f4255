"""tg.compile of a step that ends with `return loss.item()` (tapegrad/_compile/tail_reads.py):
the number read at the very end is replayed as `array.item()`; a number read earlier, or
used after the read (arithmetic, a branch, a list append, a call), stays a graph break,
and the call runs eagerly. Each replayed case equals eager bit for bit."""
import numpy as np
import pytest

import tapegrad as tg

F = tg.nn.functional


@pytest.fixture(autouse=True)
def _always_replay(monkeypatch):
    """Replays are counted: the eager-vs-replay timing trial is off."""
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)


def _setup():
    tg.manual_seed(0)
    model = tg.nn.Sequential(tg.nn.Linear(6, 16), tg.nn.ReLU(), tg.nn.Linear(16, 3))
    opt = tg.optim.AdamW(model.parameters(), lr=1e-2)
    return model, opt


def _batches(n=6):
    r = np.random.default_rng(0)
    return [(tg.tensor(r.standard_normal((5, 6)).astype(np.float32)),
             tg.tensor(r.integers(0, 3, 5))) for _ in range(n)]


def _run(make_step, compiled):
    """The numbers the steps return and the parameters after them, and the callable."""
    model, opt = _setup()
    step = make_step(model, opt)
    run = tg.compile(step) if compiled else step
    got = [run(x, y) for x, y in _batches()]
    return got, [p._data.copy() for p in model.parameters()], run


def _update(model, opt, x, y):
    """The step's update: zero_grad, the loss, backward, the optimizer's step."""
    opt.zero_grad()
    loss = F.cross_entropy(model(x), y)
    loss.backward()
    opt.step()
    return loss


def _returns_item(model, opt):
    def step(x, y):
        loss = _update(model, opt, x, y)
        return loss.item()
    return step


def _returns_a_dict_of_items(model, opt):
    def step(x, y):
        opt.zero_grad()
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        loss.backward()
        opt.step()
        acc = (logits.argmax(1) == y).float().mean()
        val = loss.item()
        return {"loss": val, "acc": acc.item(), "unit": "nats"}
    return step


@pytest.mark.parametrize("make_step", [_returns_item, _returns_a_dict_of_items])
def test_a_number_returned_at_the_end_replays_bit_for_bit(make_step):
    eager, eager_params, _ = _run(make_step, False)
    comp, comp_params, run = _run(make_step, True)
    assert run._runner.replays == len(_batches()) - 1, run._runner.why
    assert len(eager) == len(comp)
    for a, b in zip(eager, comp):
        if isinstance(a, dict):
            assert a.keys() == b.keys()
            assert type(b["loss"]) is float and type(b["acc"]) is float
            assert a == b
        else:
            assert type(b) is float and a == b
    for a, b in zip(eager_params, comp_params):
        assert np.array_equal(a, b)
    assert len(set(comp if not isinstance(comp[0], dict) else [c["loss"] for c in comp])) > 1


def _item_then_arithmetic(model, opt):
    def step(x, y):
        loss = _update(model, opt, x, y)
        return loss.item() * 2.0
    return step


def _item_then_branch(model, opt):
    def step(x, y):
        loss = _update(model, opt, x, y)
        v = loss.item()
        if v > 1.0:
            return v
        return 0.0
    return step


LOG = []


def _item_then_append(model, opt):
    def step(x, y, log=LOG):
        loss = _update(model, opt, x, y)
        v = loss.item()
        log.append(v)
        return v
    return step


def _item_before_the_update(model, opt):
    def step(x, y):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        v = loss.item()
        loss.backward()
        opt.step()
        return v
    return step


def _item_in_a_helper(model, opt):
    def number(t):
        return t.item()

    def step(x, y):
        loss = _update(model, opt, x, y)
        return number(loss)
    return step


@pytest.mark.parametrize("make_step", [_item_then_arithmetic, _item_then_branch,
                                       _item_then_append, _item_before_the_update,
                                       _item_in_a_helper])
def test_a_number_used_or_read_earlier_stays_a_graph_break(make_step):
    """The replay would reuse the captured number (or skip the append): eager runs."""
    LOG.clear()
    eager, eager_params, _ = _run(make_step, False)
    n_log = len(LOG)
    comp, comp_params, run = _run(make_step, True)
    assert run._runner.replays == 0
    assert eager == comp and len(LOG) == 2 * n_log
    for a, b in zip(eager_params, comp_params):
        assert np.array_equal(a, b)
    assert "a Python number" in " ".join(map(str, run._runner.why.values()))


def test_fullgraph_still_raises_on_item():
    model, opt = _setup()
    run = tg.compile(_returns_item(model, opt), fullgraph=True)
    (x, y), = _batches(1)
    with pytest.raises(Exception, match="graph break"):
        run(x, y)


def test_the_trace_hook_is_left_as_it_was():
    """The capture watches the function's end through sys.settrace and then removes it;
    under a debugger's or coverage's hook it leaves the hook alone (the read breaks)."""
    import sys
    model, opt = _setup()
    run = tg.compile(_returns_item(model, opt))
    (x, y), = _batches(1)
    assert sys.gettrace() is None
    run(x, y)
    assert sys.gettrace() is None

    def other(frame, event, arg):
        return None
    model, opt = _setup()
    run = tg.compile(_returns_item(model, opt))
    sys.settrace(other)
    try:
        for _ in range(3):
            run(x, y)
        assert sys.gettrace() is other
    finally:
        sys.settrace(None)
    assert run._runner.replays == 0
