"""A small corpus of differentiable calls, written once for tapegrad and PyTorch.

Used by the forward-mode, higher-order and mode-identity tests. Each entry is
(name, fn(lib, *xs), shapes, domain): `lib` is `tapegrad` or `torch`, the xs are
float64 tensors of the given shapes drawn from the domain ("real", "pos" = (0.5, 2),
"sep" = distinct values so max/min/sort have no ties). If the shared op database
(tests/opdb/) exists, `opdb_calls()` adds its entries too.
"""
import numpy as np

CORPUS = [
    ("add", lambda L, x, y: x + y, [(2, 3), (3,)], "real"),
    ("sub", lambda L, x, y: x - y, [(2, 3), (2, 1)], "real"),
    ("mul", lambda L, x, y: x * y, [(2, 3), (2, 3)], "real"),
    ("div", lambda L, x, y: x / y, [(2, 3), (3,)], "pos"),
    ("pow", lambda L, x, y: x ** y, [(2, 3), (2, 3)], "pos"),
    ("pow_scalar", lambda L, x: x ** 3, [(4,)], "real"),
    ("rpow", lambda L, x: 2.0 ** x, [(4,)], "real"),
    ("neg", lambda L, x: -x, [(3,)], "real"),
    ("maximum", lambda L, x, y: L.maximum(x, y), [(2, 3), (2, 3)], "sep"),
    ("minimum", lambda L, x, y: L.minimum(x, y), [(2, 3), (3,)], "sep"),
    ("exp", lambda L, x: L.exp(x), [(2, 3)], "real"),
    ("log", lambda L, x: L.log(x), [(2, 3)], "pos"),
    ("sqrt", lambda L, x: L.sqrt(x), [(2, 3)], "pos"),
    ("rsqrt", lambda L, x: L.rsqrt(x), [(2, 3)], "pos"),
    ("abs", lambda L, x: L.abs(x), [(2, 3)], "sep"),
    ("sin", lambda L, x: L.sin(x), [(2, 3)], "real"),
    ("cos", lambda L, x: L.cos(x), [(2, 3)], "real"),
    ("tanh", lambda L, x: L.tanh(x), [(2, 3)], "real"),
    ("sigmoid", lambda L, x: L.sigmoid(x), [(2, 3)], "real"),
    ("relu", lambda L, x: L.relu(x), [(2, 3)], "sep"),
    ("clamp", lambda L, x: L.clamp(x, -0.5, 0.5), [(3, 4)], "sep"),
    ("where", lambda L, x, y: L.where(x > 0, x, y), [(2, 3), (2, 3)], "sep"),
    ("matmul", lambda L, x, y: x @ y, [(2, 3), (3, 4)], "real"),
    ("matmul_vec", lambda L, x, y: x @ y, [(3,), (3, 2)], "real"),
    ("matmul_batched", lambda L, x, y: L.matmul(x, y), [(2, 2, 3), (3, 2)], "real"),
    ("sum", lambda L, x: x.sum(), [(2, 3)], "real"),
    ("sum_dim", lambda L, x: x.sum(1, keepdim=True), [(2, 3)], "real"),
    ("mean", lambda L, x: x.mean(0), [(2, 3)], "real"),
    ("prod", lambda L, x: x.prod(1), [(2, 3)], "pos"),
    ("prod_all", lambda L, x: x.prod(), [(2, 3)], "pos"),
    ("amax", lambda L, x: L.amax(x, 1), [(2, 3)], "sep"),
    ("amin", lambda L, x: L.amin(x, 0), [(2, 3)], "sep"),
    ("max_all", lambda L, x: x.max(), [(2, 3)], "sep"),
    ("max_dim", lambda L, x: x.max(1)[0], [(2, 3)], "sep"),
    ("min_dim", lambda L, x: x.min(0, keepdim=True)[0], [(2, 3)], "sep"),
    ("var", lambda L, x: x.var(1), [(2, 3)], "real"),
    ("var_all", lambda L, x: x.var(), [(2, 3)], "real"),
    ("std", lambda L, x: x.std(0, correction=0), [(3, 2)], "real"),
    ("logsumexp", lambda L, x: L.logsumexp(x, 1), [(2, 3)], "real"),
    ("softmax", lambda L, x: L.softmax(x, 1), [(2, 3)], "real"),
    ("log_softmax", lambda L, x: L.log_softmax(x, 0), [(2, 3)], "real"),
    ("reshape", lambda L, x: x.reshape(3, 2), [(2, 3)], "real"),
    ("expand", lambda L, x: x.expand(2, 3), [(1, 3)], "real"),
    ("permute", lambda L, x: x.permute(1, 0), [(2, 3)], "real"),
    ("transpose", lambda L, x: x.transpose(0, 1), [(2, 3)], "real"),
    ("clone", lambda L, x: x.clone(), [(2, 3)], "real"),
    ("cast", lambda L, x: x.float().double(), [(3,)], "real"),
    ("composite", lambda L, x, w: L.tanh(x @ w).exp().mean(), [(2, 3), (3, 2)], "real"),
]


def sample(rng, shape, domain):
    if domain == "pos":
        return rng.uniform(0.5, 2.0, size=shape)
    if domain == "sep":
        n = int(np.prod(shape)) if shape else 1
        vals = rng.permutation(n) * 0.37 - n * 0.15 + rng.uniform(0, 0.05, n)
        return vals.reshape(shape)
    return rng.standard_normal(shape)


def opdb_calls():
    """(name, tg_call, torch_call, arrays) from the shared op database, if it exists."""
    try:
        import opdb  # noqa: F401  (tests/opdb/, the op database)
    except Exception:
        return []
    out = []
    rng = np.random.default_rng(1)
    for info in getattr(opdb, "OP_DB", []):
        if not info.differentiable:
            continue
        try:
            samples = info.samples(rng, info)
        except Exception:
            continue
        for s in samples[:2]:
            out.append((info.id, info, s))
    return out
