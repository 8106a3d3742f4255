"""Rank script: point-to-point (send/recv/isend/irecv), the rooted collectives (reduce,
gather, scatter, gather_object, scatter_object_list), all_to_all(_single) and
monitored_barrier, each run by tapegrad (MPI) and by torch's own gloo (file store in
argv[1]) on the same ranks and inputs: results, return values and error messages must
agree. Prints `OK <rank>`."""
import sys

import numpy as np
import torch
import torch.distributed as tdist

import tapegrad as tg
import tapegrad.distributed as dist

dist.init_process_group(backend="gloo")
r, W = dist.get_rank(), dist.get_world_size()
tdist.init_process_group("gloo", init_method=f"file://{sys.argv[1]}", rank=r, world_size=W)
rng = np.random.default_rng(7)
SHAPES = [(), (1,), (3, 1), (2, 3)]
DATA = {s: [rng.standard_normal(s) for _ in range(W)] for s in SHAPES}   # same on all ranks


def both(fn, *arrays):
    """fn(lib, tensors) with each library's tensors of `arrays`; (tg's, torch's) results."""
    a = fn(tg, dist, [tg.tensor(x) for x in arrays])
    b = fn(torch, tdist, [torch.tensor(x) for x in arrays])
    return a, b


def same(a, b, what):
    if isinstance(a, (list, tuple)):
        assert len(a) == len(b), what
        for x, y in zip(a, b):
            same(x, y, what)
        return
    if hasattr(a, "numpy"):
        x, y = a.numpy(), b.numpy()
        assert x.shape == y.shape and x.dtype == y.dtype, (what, x.shape, y.shape)
        np.testing.assert_array_equal(x, y, err_msg=what)
        return
    assert a == b, (what, a, b)


def error(fn):
    try:
        fn()
    except Exception as e:                     # noqa: BLE001  compared below
        return type(e).__name__, str(e)
    return None


# ---- point to point: a ring (r -> r+1), blocking and not, any-source receives -----------------
for s in SHAPES:
    def ring(lib, d, ts):
        x = ts[r] * 1
        out = lib.zeros_like(x)
        if r % 2 == 0:
            d.send(x, dst=(r + 1) % W)
            src = d.recv(out, src=(r - 1) % W)
        else:
            src = d.recv(out, src=(r - 1) % W)
            d.send(x, dst=(r + 1) % W)
        return out, src
    (a, sa), (b, sb) = both(ring, *DATA[s])
    same(a, b, f"ring {s}")
    assert sa == sb == (r - 1) % W
    np.testing.assert_array_equal(a.numpy(), DATA[s][(r - 1) % W])


def star(lib, d, ts):
    """Every rank sends to rank 0; rank 0 receives from ANY source: the senders' set."""
    if r:
        w = d.isend(ts[r] * 1, dst=0, tag=3)
        w.wait()
        return []
    got = []
    for _ in range(W - 1):
        out = lib.zeros_like(ts[0])
        got.append((d.recv(out, tag=3), out))
    return sorted(got, key=lambda p: p[0])


a, b = both(star, *DATA[(2, 3)])
assert [k for k, _ in a] == [k for k, _ in b] == (list(range(1, W)) if r == 0 else [])
same([t for _, t in a], [t for _, t in b], "any-source recv")


def pair(lib, d, ts):
    """irecv posted before the matching isend; wait() and source_rank()."""
    out = lib.zeros(3, dtype=lib.int64)
    peer = r ^ 1
    if peer >= W:
        return out
    wr = d.irecv(out, src=peer)
    ws = d.isend(lib.arange(3) + 10 * r, dst=peer)
    ws.wait()
    wr.wait()
    assert wr.is_completed()
    return out


a, b = both(pair)
same(a, b, "isend/irecv int64")
ea, eb = error(lambda: dist.send(tg.ones(1), dst=r)), error(lambda: tdist.send(torch.ones(1), dst=r))
assert ea == eb, (ea, eb)
# a receive from itself: torch fails in gloo's transport; the same rule as send's here
ea, eb = error(lambda: dist.recv(tg.ones(1), src=r)), error(lambda: tdist.recv(torch.ones(1), src=r))
assert ea[0] == "ValueError" and "source rank should not be the same" in ea[1] and eb, (ea, eb)

# a message of another length than the receiving tensor: an error naming both
if r < 2:
    if r == 0:
        dist.send(tg.zeros(3, dtype=tg.float64), dst=1)
        dist.send(tg.zeros(1, dtype=tg.float64), dst=1)
    else:
        e = error(lambda: dist.recv(tg.zeros(2, dtype=tg.float64), src=0))
        assert e == ("RuntimeError", "recv from rank 0: the message is longer than the "
                     "receiving tensor (shape [2], float64, 16 bytes): both sides must use "
                     "the same shape and dtype"), e
        e = error(lambda: dist.recv(tg.zeros(2, dtype=tg.float64), src=0))
        assert e == ("RuntimeError", "recv: the message from rank 0 has 8 bytes, but the "
                     "receiving tensor (shape [2], float64) has 16: both sides must use the "
                     "same shape and dtype"), e

# ---- reduce: the result on dst, the other ranks' tensors untouched --------------------------------
OPS = [("SUM", "SUM"), ("MAX", "MAX"), ("MIN", "MIN"), ("PRODUCT", "PRODUCT")]
for s in SHAPES:
    for ta, tb in OPS:
        for dst in range(W):
            def red(lib, d, ts):
                x = ts[r] * 1
                ret = d.reduce(x, dst=dst, op=getattr(d.ReduceOp, ta))
                return x, ret
            (a, ra), (b, rb) = both(red, *DATA[s])
            assert ra is None and rb is None
            if r == dst:
                np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-15,
                                           err_msg=f"reduce {ta}")
            else:  # torch leaves them unspecified (gloo uses them as scratch): unchanged here
                np.testing.assert_array_equal(a.numpy(), DATA[s][r])
ea, eb = error(lambda: dist.reduce(tg.ones(1))), error(lambda: tdist.reduce(torch.ones(1)))
assert ea == eb, (ea, eb)
w = dist.reduce(tg.ones(2) * (r + 1), dst=0, async_op=True)
assert w.wait()

# ---- gather / scatter (default root 0, every root), their list checks ------------------------------
for s in SHAPES:
    for root in (None,) + tuple(range(W)):
        here = (root or 0) == r

        def gat(lib, d, ts):
            lst = [lib.zeros_like(ts[0]) for _ in range(W)] if here else None
            kw = {} if root is None else {"dst": root}
            assert d.gather(ts[r] * 1, lst, **kw) is None
            return lst or []

        def sca(lib, d, ts):
            out = lib.zeros_like(ts[0])
            kw = {} if root is None else {"src": root}
            assert d.scatter(out, [t * 2 for t in ts] if here else None, **kw) is None
            return out
        same(*both(gat, *DATA[s]), f"gather {s} {root}")
        same(*both(sca, *DATA[s]), f"scatter {s} {root}")
if r:
    for fn in (lambda lib, d: d.gather(lib.ones(2), [lib.ones(2)] * W, dst=0),
               lambda lib, d: d.scatter(lib.ones(2), [lib.ones(2)] * W, src=0)):
        ea, eb = error(lambda: fn(tg, dist)), error(lambda: fn(torch, tdist))
        assert ea == eb, (ea, eb)
    dist.gather(tg.ones(2), dst=0)
    tdist.gather(torch.ones(2), dst=0)
    dist.scatter(tg.ones(2), src=0)
    tdist.scatter(torch.ones(2), src=0)
else:
    for fn in (lambda lib, d: d.gather(lib.ones(2), None, dst=0),
               lambda lib, d: d.scatter(lib.ones(2), None, src=0)):
        ea, eb = error(lambda: fn(tg, dist)), error(lambda: fn(torch, tdist))
        assert ea == eb, (ea, eb)
    dist.gather(tg.ones(2), [tg.ones(2) for _ in range(W)], dst=0)
    tdist.gather(torch.ones(2), [torch.ones(2) for _ in range(W)], dst=0)
    dist.scatter(tg.ones(2), [tg.ones(2)] * W, src=0)
    tdist.scatter(torch.ones(2), [torch.ones(2)] * W, src=0)

# ---- objects ---------------------------------------------------------------------------------
for root in range(W):
    got = []
    for d in (dist, tdist):
        lst = [None] * W if r == root else None
        assert d.gather_object({"rank": r, "x": [r] * r}, lst, dst=root) is None
        got.append(lst)
    assert got[0] == got[1]
    got = []
    for d in (dist, tdist):
        out = [None]
        items = [("piece", k, {"k": k}) for k in range(W)] if r == root else None
        assert d.scatter_object_list(out, items, src=root) is None
        got.append(out)
    assert got[0] == got[1] == [("piece", r, {"k": r})]

# ---- all_to_all_single (equal and uneven splits), all_to_all ---------------------------------
def a2a(lib, d, ts):
    inp = lib.arange(2 * W * 3, dtype=lib.float64).reshape(2 * W, 3) + 100 * r
    out = lib.empty(2 * W, 3, dtype=lib.float64)
    assert d.all_to_all_single(out, inp) is None
    # rank a sends rank b (a + b) % 3 rows
    ins = [(r + k) % 3 for k in range(W)]
    outs = [(k + r) % 3 for k in range(W)]
    inp2 = lib.arange(sum(ins), dtype=lib.int64) + 1000 * r
    out2 = lib.empty(sum(outs), dtype=lib.int64)
    d.all_to_all_single(out2, inp2, outs, ins)
    lst = [lib.empty(2) for k in range(W)]
    d.all_to_all(lst, [lib.full((2,), float(10 * r + k)) for k in range(W)])
    return [out, out2] + lst


same(*both(a2a), "all_to_all")
# pieces of different sizes (gloo's all_to_all refuses them; MPI's takes them): rank a
# sends rank b a + 1 values 10a + b
lst = [tg.empty(k + 1) for k in range(W)]
dist.all_to_all(lst, [tg.full((r + 1,), float(10 * r + k)) for k in range(W)])
for k in range(W):
    np.testing.assert_array_equal(lst[k].numpy(), np.full(k + 1, 10.0 * k + r))

assert dist.monitored_barrier() is None
tdist.monitored_barrier()
tdist.destroy_process_group()
dist.destroy_process_group()
print(f"OK {r}", flush=True)
