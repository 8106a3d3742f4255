"""Rank script: every collective and ReduceOp against values computed here with NumPy
from each rank's known input (rank r holds base * (r + 1)). Prints `OK <rank>`."""
import os

import numpy as np

import tapegrad as tg
import tapegrad.distributed as dist

assert dist.is_available() and not dist.is_initialized()
dist.init_process_group("gloo")
assert dist.is_initialized() and dist.get_backend() == "gloo"
r, W = dist.get_rank(), dist.get_world_size()
assert (r, W) == (int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"]))
assert int(os.environ["LOCAL_RANK"]) == r
base = np.array([[1.5, -2.0, 3.0], [0.5, 4.0, -1.0]])
inputs = [base * (k + 1) for k in range(W)]          # what every rank holds
expect = {dist.ReduceOp.SUM: np.sum(inputs, 0), dist.ReduceOp.AVG: np.mean(inputs, 0),
          dist.ReduceOp.MAX: np.max(inputs, 0), dist.ReduceOp.MIN: np.min(inputs, 0),
          dist.ReduceOp.PRODUCT: np.prod(inputs, 0)}
for op, want in expect.items():
    t = tg.tensor(inputs[r])
    assert dist.all_reduce(t, op=op) is None
    np.testing.assert_allclose(t.numpy(), want, rtol=1e-15, err_msg=str(op))
# float32 and integers keep their dtype
t = tg.tensor(inputs[r].astype(np.float32))
dist.all_reduce(t)
assert t.dtype == tg.float32
np.testing.assert_allclose(t.numpy(), expect["SUM"], rtol=1e-6)
t = tg.tensor(np.arange(4) * (r + 1))
dist.all_reduce(t, op=dist.ReduceOp.MAX)
assert t.dtype == tg.int64 and t.numpy().tolist() == [0, W, 2 * W, 3 * W]
# async: a Work to wait on
t = tg.tensor(inputs[r])
work = dist.all_reduce(t, async_op=True)
work.wait()
assert work.is_completed()
np.testing.assert_allclose(t.numpy(), expect["SUM"])
# a 0-d tensor
t = tg.tensor(float(r))
dist.all_reduce(t)
assert t.shape == () and t.item() == sum(range(W))
# broadcast from the last rank
t = tg.tensor(inputs[r])
dist.broadcast(t, src=W - 1)
np.testing.assert_array_equal(t.numpy(), inputs[W - 1])
# all_gather / all_gather_into_tensor
outs = [tg.zeros(2, 3, dtype=tg.float64) for _ in range(W)]
dist.all_gather(outs, tg.tensor(inputs[r]))
for k in range(W):
    np.testing.assert_array_equal(outs[k].numpy(), inputs[k])
big = tg.zeros(2 * W, 3, dtype=tg.float64)
dist.all_gather_into_tensor(big, tg.tensor(inputs[r]))
np.testing.assert_array_equal(big.numpy(), np.concatenate(inputs))
# reduce_scatter: rank k gets the sum over ranks of their input_list[k]
lists = [[inputs[q] + 10 * k for k in range(W)] for q in range(W)]   # lists[q][k]
out = tg.zeros(2, 3, dtype=tg.float64)
dist.reduce_scatter(out, [tg.tensor(a) for a in lists[r]])
np.testing.assert_allclose(out.numpy(), sum(lists[q][r] for q in range(W)))
out = tg.zeros(2, 3, dtype=tg.float64)
dist.reduce_scatter_tensor(out, tg.tensor(np.concatenate(lists[r])), op=dist.ReduceOp.AVG)
np.testing.assert_allclose(out.numpy(), sum(lists[q][r] for q in range(W)) / W)
# objects
objs = [None] * W
dist.all_gather_object(objs, {"rank": r})
assert objs == [{"rank": k} for k in range(W)]
lst = [r, "x"]
dist.broadcast_object_list(lst, src=0)
assert lst == [0, "x"]
# clear errors
for call, msg in [(lambda: dist.all_reduce(tg.ones(2), op="mean"), "unknown op"),
                  (lambda: dist.broadcast(tg.ones(2), src=W), "src=%d" % W),
                  (lambda: dist.all_reduce(np.ones(2)), "must be a tapegrad Tensor"),
                  (lambda: dist.all_gather([tg.ones(2)] * (W + 1), tg.ones(2)), "world_size"),
                  (lambda: dist.init_process_group("gloo"), "twice")]:
    try:
        call()
    except (ValueError, TypeError, RuntimeError) as e:
        assert msg in str(e), (msg, str(e))
    else:
        raise AssertionError(f"no error for {msg}")
dist.barrier()
dist.destroy_process_group()
assert not dist.is_initialized()
print(f"OK {r}", flush=True)
