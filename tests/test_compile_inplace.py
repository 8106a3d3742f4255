"""The replay's in-place rewrite (tapegrad/_compile/inplace.py): an elementwise line
writes into an operand's buffer only when nothing else can see that buffer, and a
compiled step stays bit for bit eager's.

The rule's cases are checked on lines written by hand (each "must not" case is a way
the buffer could still be seen: a later read, a second name, a call that may keep it,
a container, a return, another shape or dtype, a 0-d value, a binding inside a block);
then whole training steps (residual adds whose gradient reaches both inputs, a leaf
and an intermediate sharing one gradient, GELU, layer norm) are compiled and compared
with eager, and the printed replay must show the rewrite (else the test proves
nothing about it).
"""
import numpy as np
import pytest

import tapegrad as tg
from tapegrad._compile.inplace import rewrite

F32 = np.dtype("float32")
F64 = np.dtype("float64")
M = ((4, 5), F32)


def _rw(src, metas=None, **more):
    lines = ["    " + line for line in src.strip("\n").split("\n")]
    metas = dict(metas or {}, **more)
    return [line[4:] for line in rewrite(lines, metas)]


def _all(*names, meta=M):
    return {n: meta for n in names}


def test_a_dying_fresh_operand_is_written_into():
    out = _rw("a = matmul(x, w)\nb = a + c\nd = maximum(b, 0)\nreturn {1: d}",
              _all("a", "b", "c", "d"))
    assert out[1] == "b = np.add(a, c, out=a)"
    assert out[2] == "d = maximum(b, 0, out=b)"   # b's buffer is a's: still its own
    out = _rw("a = p * q\nb = c - a\ne = np.exp(b)\nreturn {1: e}",
              _all("a", "b", "c", "e"))
    assert out[1] == "b = np.subtract(c, a, out=a)"  # (the right operand when the left
    assert out[2] == "e = np.exp(b, out=b)"          # one is not this pass's)


def test_an_accumulation_into_itself():
    out = _rw("g = ng_fwd(u, h, s)\nk = matmul(g, w)\nd = p * q\ng = g + d\nreturn {1: g, 2: k}",
              _all("g", "d", "k"))
    assert out[3] == "g = np.add(g, d, out=g)"


@pytest.mark.parametrize("src", [
    "a = matmul(x, w)\nb = a + c\nz = a * 2.0\nreturn {1: b, 2: z}",      # read later
    "a = matmul(x, w)\nr = a\nb = a + c\nreturn {1: b, 2: r}",            # a second name
    "a = matmul(x, w)\nr = a.reshape(-1)\nb = a + c\nreturn {1: b, 2: r}",  # a view named
    "a = matmul(x, w)\nkeep(a)\nb = a + c\nreturn {1: b}",                 # a call keeps it
    "a = matmul(x, w)\nkept[3] = ((a,), K, c)\nb = a + c\nreturn {1: b}",  # a container
    "a = matmul(x, w, out=t)\nb = a + c\nreturn {1: b}",                   # t's buffer
    "a = f(x)\nb = a + c\nreturn {1: b}",                                  # unknown maker
    "a = x\nb = a + c\nreturn {1: b}",                                     # an input's
    "a = asarray(p * q)\nb = a + c\nreturn {1: b}",                       # may be p * q's
    "a = matmul(x, w)\nif f(c):\n    a = c\nb = a + c\nreturn {1: b}",     # bound in a block
    "a = matmul(x, w)\nb = a + c\nif f(c):\n    z = a * 2\nreturn {1: b}",  # read in a block
    "a = matmul(x, w)\nb = a + c\nreturn {1: b, 2: a}",                  # returned
])
def test_a_buffer_that_may_be_seen_is_left_alone(src):
    metas = _all("a", "b", "c", "z", "r")
    assert "b = a + c" in _rw(src, metas)  # (a line after it may take a's buffer)


def test_shapes_and_dtypes_must_be_the_result_s():
    src = "a = matmul(x, w)\nb = a + c\nreturn {1: b}"
    assert _rw(src, a=((5,), F32), b=M, c=M)[1] == "b = a + c"       # broadcast into b
    assert _rw(src, a=((4, 5), F32), b=((4, 5), F64), c=((4, 5), F64))[1] == \
        "b = a + c"                                                    # promoted
    assert _rw(src, a=((), F32), b=((), F32), c=((), F32))[1] == "b = a + c"  # 0-d
    assert _rw(src, a=M, c=M)[1] == "b = a + c"                        # b unknown
    assert _rw(src, b=M, c=M)[1] == "b = a + c"                        # a unknown


def test_a_view_of_a_fresh_product_is_reused_only_when_the_result_is_not_handed_on():
    src = ("d = matmul(g, w).reshape((4, 5))\ne = d * s\nh = matmul(e.reshape(-1, 5), w)"
           "\nreturn {1: h}")
    assert _rw(src, _all("d", "e", "s"))[1] == "e = np.multiply(d, s, out=d)"
    # e becomes a leaf's .grad: it must own its memory (the hand-off keeps it as it is)
    src = "d = matmul(g, w).reshape((4, 5))\ne = d * s\ngset(P, make(T, e))\nreturn {}"
    assert _rw(src, _all("d", "e", "s"))[1] == "e = d * s"


# ---- whole steps, compiled against eager ------------------------------------------------
@pytest.fixture(autouse=True)
def _always_replay(monkeypatch):
    monkeypatch.setattr(tg._dynamo.config, "fallback_if_slower", False)


class _Block(tg.nn.Module):
    """A residual MLP block (nanoGPT's shape): x + proj(gelu(fc(ln(x)))), twice."""

    def __init__(self, c=16):
        super().__init__()
        self.inp = tg.nn.Linear(8, c)
        self.ln1, self.ln2 = tg.nn.LayerNorm(c), tg.nn.LayerNorm(c)
        self.fc1, self.fc2 = tg.nn.Linear(c, 4 * c), tg.nn.Linear(c, 4 * c)
        self.pr1, self.pr2 = tg.nn.Linear(4 * c, c), tg.nn.Linear(4 * c, c)
        self.head = tg.nn.Linear(c, 5)

    def forward(self, x):
        x = self.inp(x)
        x = x + self.pr1(tg.nn.functional.gelu(self.fc1(self.ln1(x))))
        x = x + self.pr2(tg.nn.functional.gelu(self.fc2(self.ln2(x))))
        return self.head(x).reshape(-1, 5)


def _steps(model, batches, compiled, make_opt):
    opt = make_opt(model.parameters())

    def step(x, y):
        opt.zero_grad()
        loss = tg.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss
    run = tg.compile(step) if compiled else step
    rec = []
    for x, y in batches:
        rec.append(run(tg.tensor(x), tg.tensor(y))._data.copy())
        rec += [p.grad._data.copy() for p in model.parameters()]
        rec += [p._data.copy() for p in model.parameters()]
    return run, rec


@pytest.mark.parametrize("make_opt", [lambda p: tg.optim.SGD(p, lr=0.1),
                                      lambda p: tg.optim.AdamW(p, lr=1e-2)])
def test_residual_blocks_replay_bit_for_bit_with_their_adds_in_place(make_opt):
    r = np.random.default_rng(0)
    batches = [(r.standard_normal((3, 4, 8)).astype(np.float32), r.integers(0, 5, 12))
               for _ in range(5)]
    tg.manual_seed(0)
    _, eager = _steps(_Block(), batches, False, make_opt)
    tg.manual_seed(0)
    run, comp = _steps(_Block(), batches, True, make_opt)
    assert run._runner.replays == len(batches) - 1, run._runner.why
    assert len(eager) == len(comp)
    for k, (a, b) in enumerate(zip(eager, comp)):
        assert a.dtype == b.dtype and np.array_equal(a, b), k
    code = run.explain()
    assert code.count(", out=v") >= 2      # the residual adds (forward)
    assert "np.multiply(d" in code and ", out=d" in code  # gelu's rule, the sums


def _graph_step(P, Q, R, shape_kind):
    """Gradients that meet: an add's g given to a leaf and to an intermediate that gets
    more afterwards, a value read twice, a broadcast operand."""
    y = Q * 3.0
    w = y.tanh()
    z = P + y
    u = (z * w).relu() + R            # R broadcasts: its gradient is summed
    v = u.exp() * z - y
    loss = (v * v).sum() + (w * u).sum() if shape_kind else (v + w).sum()
    loss.backward()
    return loss


@pytest.mark.parametrize("shape_kind", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gradients_that_meet_replay_bit_for_bit(shape_kind, dtype):
    r = np.random.default_rng(1)
    P, Q = (tg.tensor((r.standard_normal((4, 5)) / 3).astype(dtype), requires_grad=True)
            for _ in range(2))
    R = tg.tensor((r.standard_normal(5) / 3).astype(dtype), requires_grad=True)

    def run(f):
        P.grad = Q.grad = R.grad = None
        loss = f(P, Q, R, shape_kind)
        return [loss._data.copy(), P.grad._data.copy(), Q.grad._data.copy(),
                R.grad._data.copy()]
    want = run(_graph_step)
    c = tg.compile(_graph_step)
    for _ in range(3):
        got = run(c)
        for a, b in zip(want, got):
            assert a.dtype == b.dtype and np.array_equal(a, b)
    assert c._runner.replays == 2, c._runner.why
    assert "out=" in c.explain()
    # each leaf's .grad owns its memory, as eager's does
    for t in (P, Q, R):
        assert t.grad._data.base is None and t.grad._data.flags.writeable


# ---- random graphs: whatever the rewrite takes, the replay is eager's ----------------------
_UNARY_OPS = [lambda t: t.tanh(), lambda t: t.relu(), lambda t: (t * 0.5).exp(),
              lambda t: t * t, lambda t: -t]
_BINARY_OPS = [lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b,
               lambda a, b: a / (b * b + 1.0),
               # (a view of a parameter when b is one: W.T changes with the SGD step)
               lambda a, b: a @ b.T @ b / 8 if a.ndim == b.ndim == 2 else a * b]


def _random_graph(seed, P, x):
    """A random DAG over the parameters and the input: values read once or many times
    (the rewrite's liveness), broadcast and 2-d operands, views of parameters, one loss
    over several ends (P[0] always among them: the loss needs a gradient)."""
    r = np.random.default_rng(seed)
    vals = [x] + list(P)
    for _ in range(10):
        if r.random() < 0.4:
            v = _UNARY_OPS[r.integers(len(_UNARY_OPS))](vals[r.integers(len(vals))])
        else:
            i, j = r.integers(len(vals), size=2)
            v = _BINARY_OPS[r.integers(len(_BINARY_OPS))](vals[i], vals[j])
        vals.append(v)
    a, b, c = vals[-1], vals[-2], vals[r.integers(len(P) + 1, len(vals))]
    return (a * a).sum() + (b * b).sum() + (c * c).sum() + (P[0] * P[0]).sum()


@pytest.mark.parametrize("seed", range(24))
def test_random_graphs_replay_bit_for_bit(seed):
    r = np.random.default_rng(100 + seed)
    shapes = [(6, 5), (6, 5), (5,), (1, 5)]  # (broadcast operands: their sums in the rules)
    init = [(r.standard_normal(s) / 2).astype(np.float32) for s in shapes]
    xs = [r.standard_normal((6, 5)).astype(np.float32) / 2 for _ in range(4)]

    def train(compiled):
        P = [tg.tensor(a.copy(), requires_grad=True) for a in init]
        opt = tg.optim.SGD(P, lr=0.01)

        def step(x):
            opt.zero_grad()
            loss = _random_graph(seed, P, x)
            loss.backward()
            opt.step()
            return loss
        run = tg.compile(step) if compiled else step
        rec = []
        for x in xs:
            rec += _record(run(tg.tensor(x)), P)
        return run, rec
    _same_runs(train, len(xs))


def _record(loss, P):
    """A step's loss, then each parameter's gradient (None when it got none) and value."""
    return ([loss._data.copy()] + [p.grad._data.copy() if p.grad is not None else None
                                   for p in P] + [p._data.copy() for p in P])


def _same_runs(train, n):
    """`train(compiled)` -> (callable, record): eager's and the compiled run's records
    equal bit for bit, the compiled one replayed after its capture."""
    _, want = train(False)
    run, got = train(True)
    assert run._runner.replays == n - 1, run._runner.why
    assert len(want) == len(got)
    for k, (a, b) in enumerate(zip(want, got)):
        assert (a is None) == (b is None), k
        if a is not None:
            assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True), k


class _RandomNet(tg.nn.Module):
    def __init__(self, seed, init):
        super().__init__()
        self.seed = seed
        self.P = tg.nn.ParameterList([tg.nn.Parameter(tg.tensor(a.copy())) for a in init])

    def forward(self, x):
        return _random_graph(self.seed, list(self.P), x)


@pytest.mark.parametrize("seed", range(12))
def test_random_graphs_compiled_model_with_the_backward_outside(seed):
    # nanoGPT's `model = torch.compile(model)`: the forward replayed, its backward the
    # compiled node's rules (the arrays they read kept), the optimizer outside
    r = np.random.default_rng(200 + seed)
    init = [(r.standard_normal(s) / 2).astype(np.float32) for s in [(6, 5), (6, 5), (5,)]]
    xs = [r.standard_normal((6, 5)).astype(np.float32) / 2 for _ in range(4)]

    def train(compiled):
        net = _RandomNet(seed, init)
        model = tg.compile(net) if compiled else net
        opt = tg.optim.AdamW(net.parameters(), lr=0.01)
        rec = []
        for x in xs:
            opt.zero_grad()
            loss = model(tg.tensor(x))
            loss.backward()
            opt.step()
            rec += _record(loss, net.P)
        return model, rec
    _same_runs(train, len(xs))
