"""DistributedDataParallel: each rank runs the model on its shard of the batch; the
gradients are averaged across ranks during backward, so after `loss.backward()` every
rank holds the gradient of the mean loss over the global batch (= gradient accumulation
of the ranks' micro-batches, worked example 9, summed across processes).

How the reduction runs (torch's Reducer, rebuilt from public pieces):
- parameters are grouped into buckets (reverse registration order, which is roughly the
  order backward produces their gradients; 1 MB first bucket, then `bucket_cap_mb`),
  each with one flat NumPy buffer allocated at construction;
- a post-accumulate-grad hook on each parameter marks it ready; when a bucket's last
  parameter is ready, its gradients are copied into the buffer, multiplied by 1/world on
  the way (torch's Reducer does the same: one pass), and an `Iallreduce` (SUM) starts.
  Buckets start strictly in index order on every rank, because MPI needs the same order
  of collectives on all ranks. tapegrad's engine accumulates every leaf after its walk,
  so the hooks run at the end of backward: there is no backward left to overlap with;
- torch waits for the buckets in a callback queued on the autograd engine
  (`Variable._execution_engine.queue_callback`) that runs when backward ends. tapegrad's
  engine has no public final callback, so the hook that launches the LAST bucket also
  waits for all of them and copies the averages back into each `.grad` in place (as
  torch's `grad.copy_(bucket_view)`; with gradient_as_bucket_view=True `.grad` is a view
  of the bucket instead). Nothing after that point in backward touches these
  parameters' gradients, so this is the same moment as far as `.grad` is concerned.
- With one rank the average is the gradient itself: nothing is copied or sent.
`no_sync()` / `require_backward_grad_sync = False` skip the reduction (gradients just
accumulate locally); the flag is read at forward time, as torch does.
"""
import contextlib

import numpy as np

from tapegrad.core.grad_mode import is_grad_enabled, no_grad
from tapegrad.core.node import AccumulateGrad
from tapegrad import distributed as dist
from tapegrad.distributed import process_group as _pg
from tapegrad.distributed.node_reduce import NodeReducer, add_parts
from tapegrad.ops.creation import from_numpy
from tapegrad._tensor import Tensor

from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024          # torch: dist._DEFAULT_FIRST_BUCKET_BYTES

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `tapegrad.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss. "
    "Parameters which did not receive grad for rank {rank}: {names}")


class _Bucket:
    """A group of parameters all-reduced together through one flat buffer, allocated once
    (a fresh ~1 MB array every step costs its page faults again: it comes from mmap)."""
    __slots__ = ("index", "params", "offsets", "dtype", "size", "pending", "buf", "req")

    def __init__(self, index, params, dtype):
        self.index, self.params, self.dtype = index, params, dtype
        self.offsets, n = [], 0
        for _, p in params:
            self.offsets.append(n)
            n += p._data.size
        self.size = n
        self.pending = len(params)
        self.buf = None          # made when first needed (not on the shared-memory path)
        self.req = None

    def flat(self):
        """The bucket's own flat buffer (allocated once, on first use)."""
        if self.buf is None:
            self.buf = np.zeros(self.size, dtype=self.dtype)
        return self.buf


def _address(a):
    """Where an array's first element lives (two views of one bucket slot are equal)."""
    return a.__array_interface__["data"][0]


def _output_tensors(out):
    """The tensors in a forward output (tensor, or nested tuple/list/dict of them)."""
    found, stack = [], [out]
    while stack:
        o = stack.pop()
        if isinstance(o, Tensor):
            found.append(o)
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
    return found


def _reachable_leaves(outputs):
    """ids of the leaf tensors backward from `outputs` would reach (iterative walk)."""
    seen_nodes, leaves = set(), set()
    stack = []
    for t in outputs:
        if t.grad_fn is None:
            leaves.add(id(t))
        else:
            stack.append(t.grad_fn)
    while stack:
        node = stack.pop()
        if id(node) in seen_nodes:
            continue
        seen_nodes.add(id(node))
        for fn, _ in node.next_functions:
            if fn is None:
                continue
            if isinstance(fn, AccumulateGrad):  # a leaf: the parameter is .variable
                leaves.add(id(fn.variable))
            elif id(fn) not in seen_nodes:
                stack.append(fn)
    return leaves


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel on tapegrad.distributed (MPI).

    module: the model (identical architecture on every rank; rank 0's parameters and
    buffers are broadcast to all at construction). device_ids / output_device are
    accepted and ignored (CPU). broadcast_buffers: buffers (BatchNorm running
    statistics) are broadcast from rank 0 before a forward that follows a synchronising
    one, as torch does; between broadcasts each rank updates its own.
    bucket_cap_mb: bucket size (default 25). find_unused_parameters: walk the autograd
    graph after forward and mark parameters it does not reach as ready, so the reduction
    can finish. The wrapped model is `.module`; state dict keys carry the `module.`
    prefix, as torch's.
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, process_group=None, bucket_cap_mb=None,
                 find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False,
                 forward_sync_buffers=None, **kwargs):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be a tapegrad.nn.Module, "
                            f"got {type(module).__name__}")
        self.module = module
        self._comm = _pg.comm_for(process_group, "DistributedDataParallel")
        self._MPI = _pg.mpi()
        self.process_group = process_group
        self.device_ids = device_ids
        self.output_device = output_device
        self.dim = dim
        # torch 2.13: broadcast_buffers=False also skips the buffers' sync at
        # construction; forward_sync_buffers=False skips only the per-forward one.
        self._init_sync_buffers = bool(broadcast_buffers)
        if forward_sync_buffers is not None:
            broadcast_buffers = forward_sync_buffers
            self._init_sync_buffers = True
        self.broadcast_buffers = bool(broadcast_buffers)
        self.find_unused_parameters = bool(find_unused_parameters)
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        if bucket_cap_mb is None:
            bucket_cap_mb = 25
        if not bucket_cap_mb > 0:
            raise ValueError(f"DistributedDataParallel: bucket_cap_mb must be > 0, got "
                             f"{bucket_cap_mb}")
        self.bucket_cap_mb = bucket_cap_mb
        named = [(n, p) for n, p in module.named_parameters() if p.requires_grad]
        if not named:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self._named_params = named
        self._verify_same_model()
        self._sync_params_and_buffers()
        self._buckets = self._build_buckets(int(bucket_cap_mb * 1024 * 1024))
        # ranks all on this machine: buckets through shared memory (node_reduce.py)
        self._node = NodeReducer.create(self._comm, [(b.size, b.dtype) for b in self._buckets])
        self._where = {}                       # id(param) -> (bucket, slot)
        for b in self._buckets:
            for slot, (_, p) in enumerate(b.params):
                self._where[id(p)] = (b, slot)
        self._handles = [p.register_post_accumulate_grad_hook(self._make_hook(p))
                         for _, p in named]
        self._expect_hooks = False
        self._ready = set()
        self._next_bucket = 0
        self._used_req = self._used_counts = None
        self._local_used = None
        self.launch_log = []    # (bucket index, params ready so far) per launch, for tests

    # ---- construction ---------------------------------------------------------------
    def _verify_same_model(self):
        """Every rank must wrap the same parameter list (names, shapes, dtypes): else the
        flat buffers would not line up and the allreduce would hang or mix values."""
        mine = [(n, tuple(p._data.shape), str(p._data.dtype)) for n, p in self._named_params]
        _pg.arrive(self._comm, "DistributedDataParallel's model check at construction")
        everyone = self._comm.allgather(mine)
        ref = everyone[0]
        for r, theirs in enumerate(everyone[1:], start=1):
            if len(theirs) != len(ref):
                raise RuntimeError(
                    f"DistributedDataParallel: DDP expects same model across all ranks, but "
                    f"rank {r} has {len(theirs)} params, while rank 0 has {len(ref)} params")
            for (n0, s0, d0), (n1, s1, d1) in zip(ref, theirs):
                if (s0, d0) != (s1, d1) or n0 != n1:
                    raise RuntimeError(
                        f"DistributedDataParallel: parameter {n1!r} of rank {r} has shape "
                        f"{list(s1)} ({d1}) but rank 0's {n0!r} has shape {list(s0)} ({d0}); "
                        "DDP expects the same model on all ranks")

    def _sync_params_and_buffers(self):
        tensors = [p for _, p in self._named_params]
        if self._init_sync_buffers:
            tensors += [b for _, b in self.module.named_buffers()]
        self._bcast(tensors)

    def _bcast(self, tensors):
        if self._comm.Get_size() == 1:
            return
        reqs, bufs = [], []
        for t in tensors:
            buf = np.array(t._data, order="C", copy=True)
            reqs.append(self._comm.Ibcast(buf, root=0))
            bufs.append(buf)
        _pg.wait_all(reqs, "DistributedDataParallel's broadcast of parameters and buffers",
                     _pg.timeout_of(self._comm))
        with no_grad():
            for t, buf in zip(tensors, bufs):
                t.copy_(from_numpy(buf))

    def _build_buckets(self, cap):
        """Reverse registration order, one dtype per bucket, 1 MB first bucket."""
        buckets, cur, cur_bytes, cur_dtype = [], [], 0, None
        limit = min(_FIRST_BUCKET_BYTES, cap)
        for name, p in reversed(self._named_params):
            nbytes = p._data.nbytes
            if cur and (cur_dtype != p._data.dtype or cur_bytes + nbytes > limit):
                buckets.append(_Bucket(len(buckets), cur, cur_dtype))
                cur, cur_bytes, limit = [], 0, cap
            cur.append((name, p))
            cur_bytes += nbytes
            cur_dtype = p._data.dtype
        if cur:
            buckets.append(_Bucket(len(buckets), cur, cur_dtype))
        return buckets

    # ---- forward ----------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        sync = is_grad_enabled() and self.require_backward_grad_sync
        if self._expect_hooks and self._ready:
            self._raise_unfinished()
        # torch decides the buffer broadcast from the PREVIOUS forward's mode (its
        # _post_forward sets require_forward_param_sync): an eval forward right after a
        # training step still broadcasts, the one after it does not.
        if self.require_forward_param_sync and self.broadcast_buffers:
            bufs = [b for _, b in self.module.named_buffers()]
            if bufs:
                self._bcast(bufs)
        out = self.module(*inputs, **kwargs)
        self.require_forward_param_sync = sync
        self._prepare_for_backward(out if sync else None)
        return out

    def _raise_unfinished(self):
        missing = [n for n, p in self._named_params if id(p) not in self._ready]
        self._expect_hooks = False
        raise RuntimeError(_UNFINISHED.format(rank=self._comm.Get_rank(),
                                              names=", ".join(missing)))

    def _prepare_for_backward(self, out):
        self._ready = set()
        self._next_bucket = 0
        for b in self._buckets:
            b.pending, b.req = len(b.params), None
        self.launch_log = []
        if out is None:
            self._expect_hooks = False
            return
        self._expect_hooks = True
        self._local_used = None
        if self.find_unused_parameters:
            reach = _reachable_leaves(_output_tensors(out))
            used = np.array([id(p) in reach for _, p in self._named_params], dtype=np.int32)
            self._local_used = used.astype(bool)
            # Which parameters are used ANYWHERE: a globally unused one keeps its .grad.
            self._used_counts = used.copy()
            self._used_req = self._comm.Iallreduce(self._MPI.IN_PLACE, self._used_counts,
                                                   op=self._MPI.SUM)
            for (_, p), u in zip(self._named_params, self._local_used):
                if not u:
                    self._mark_ready(p)

    # ---- backward hooks -------------------------------------------------------------------
    def _make_hook(self, param):
        def hook(p):
            if self._expect_hooks:
                self._mark_ready(param)
        return hook

    def _mark_ready(self, p):
        if id(p) in self._ready:
            name = next(n for n, q in self._named_params if q is p)
            raise RuntimeError(
                f"DistributedDataParallel: parameter {name!r} was marked ready twice in one "
                "iteration (a second backward through the same forward, or a parameter used "
                "in two backward passes); run forward again, or use no_sync() for all but the "
                "last backward")
        self._ready.add(id(p))
        bucket, _ = self._where[id(p)]
        bucket.pending -= 1
        # Start every bucket, in order, whose parameters are all ready.
        while (self._next_bucket < len(self._buckets)
               and self._buckets[self._next_bucket].pending == 0):
            self._launch(self._buckets[self._next_bucket])
            self._next_bucket += 1
        if self._next_bucket == len(self._buckets):
            self._finalize()

    def _launch(self, b):
        """Copy the bucket's gradients into its buffer (or this rank's shared slot),
        multiplied by 1/world on the way (torch's Reducer does the same: one pass, not
        two), and start the reduction: the SUM of the scaled gradients is their average."""
        self.launch_log.append((b.index, len(self._ready)))
        world = self._comm.Get_size()
        if world == 1:
            return                         # the average of one rank's gradients: as they are
        if self._node is not None:
            buf = self._node.slot(b.index)
        else:
            buf = b.flat()
        scale = 1.0 / world
        for (_, p), off in zip(b.params, b.offsets):
            part = buf[off:off + p._data.size]
            if p.grad is None:
                part[...] = 0              # locally unused: contributes zero
            else:
                np.multiply(p.grad._data.reshape(-1), scale, out=part, casting="unsafe")
        if self._node is not None:
            b.req = self._node.arrive(b.index)
        else:
            b.req = self._comm.Iallreduce(self._MPI.IN_PLACE, buf, op=self._MPI.SUM)

    def _finalize(self):
        """Wait for every bucket; write the averages into each `.grad` in place, as
        torch's Reducer does (`grad.copy_(bucket_view)`): `.grad` stays the tensor that
        backward made, owning its memory; the buffers are reused next step."""
        self._expect_hooks = False
        if self._comm.Get_size() == 1:
            if self._used_req is not None:
                self._used_req.Wait()      # complete it: MPI requests must not leak
                self._used_req = None
            return
        what = "DistributedDataParallel's gradient all_reduce"
        timeout = _pg.timeout_of(self._comm)
        _pg.wait_all([b.req for b in self._buckets], what, timeout)
        globally_used = None
        if self._used_req is not None:
            _pg.wait_all([self._used_req], what, timeout)
            globally_used = {id(p): bool(c) for (_, p), c in zip(self._named_params,
                                                                 self._used_counts)}
            self._used_req = None
        for b in self._buckets:
            parts = self._node.parts(b.index) if self._node is not None else None
            for (_, p), off in zip(b.params, b.offsets):
                if globally_used is not None and not globally_used[id(p)]:
                    continue                      # unused on every rank: .grad untouched
                self._write_average(b, parts, p, off)
            b.req = None
        if self._node is not None:
            self._node.flip()

    def _write_average(self, b, parts, p, off):
        """p's averaged gradient into `.grad`: summed from the shared slots (`parts`) or
        copied from the all-reduced buffer."""
        n, shape = p._data.size, p._data.shape
        g = p.grad
        if self.gradient_as_bucket_view:
            # `.grad` becomes a view of the bucket and stays that tensor while backward
            # accumulates into it in place (zero_grad(set_to_none=False))
            avg = b.flat()[off:off + n].reshape(shape)
            if parts is not None:
                add_parts(parts, off, off + n, avg)
            if not (g is not None and g._data.shape == shape
                    and _address(g._data) == _address(avg)):
                p.grad = Tensor._of(avg)
            return
        if (g is not None and g.grad_fn is None and g._data.shape == shape
                and g._data.dtype == b.dtype and g._data.flags.writeable
                and g._data.flags.c_contiguous):
            out = g._data
        else:
            out = np.empty(shape, dtype=b.dtype)
            p.grad = Tensor._of(out)
        if parts is not None:
            add_parts(parts, off, off + n, out)
        else:
            np.copyto(out, b.buf[off:off + n].reshape(shape))

    # ---- torch API ------------------------------------------------------------------------
    @contextlib.contextmanager
    def no_sync(self):
        """Inside: backward accumulates gradients locally without communicating; the
        first synchronised backward after it averages the accumulated sums."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old

    def extra_repr(self):
        return (f"world_size={self._comm.Get_size()}, buckets={len(self._buckets)}, "
                f"find_unused_parameters={self.find_unused_parameters}")
