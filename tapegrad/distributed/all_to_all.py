"""all_to_all_single and all_to_all, as torch.distributed: every rank sends a piece to
every rank (itself included). all_to_all_single splits `input` along dim 0 (equal
pieces, or `input_split_sizes` rows each) and fills `output` with the pieces the ranks
sent, in rank order (`output_split_sizes`); all_to_all sends input_tensor_list[k] to
rank k and receives rank k's piece into output_tensor_list[k].

One MPI_Ialltoallv on the pieces' bytes. The sizes must agree across ranks (what rank
a sends b is what b expects from a): MPI cannot check that, so a mismatch in the
counts is an error here only where a rank can see it (its own totals).
"""
import numpy as np

from .collectives import Work, _check_tensor, _done, _member_comm, _write
from .fingerprint import check_same, describe
from .process_group import comm_for, mpi

__all__ = ["all_to_all_single", "all_to_all"]


def _splits(sizes, rows, n, what, name):
    """Rows per rank of the tensor `name`: `sizes` checked, or equal pieces of `rows`."""
    arg = f"{name}_split_sizes"
    if sizes is None or len(sizes) == 0:
        if rows % n:
            raise ValueError(f"{what}: dim 0 of the {name} ({rows}) is not divisible by the "
                             f"world size {n}; give {arg}")
        return [rows // n] * n
    sizes = [int(s) for s in sizes]
    if len(sizes) != n or any(s < 0 for s in sizes):
        raise ValueError(f"{what}: {arg} must be {n} non-negative sizes, got {list(sizes)}")
    if sum(sizes) != rows:
        raise ValueError(f"{what}: {arg} {sizes} sum to {sum(sizes)}, but dim 0 has {rows} "
                         "rows")
    return sizes


def _start(comm, send, send_counts, recv, recv_counts, finish, what, async_op, dtype):
    """Ialltoallv of byte buffers, counts in bytes (the pieces' sizes may differ between
    ranks; their dtype may not)."""
    check_same(comm, what, describe(what, dtype=dtype))
    BYTE = mpi().BYTE
    sdis = np.concatenate([[0], np.cumsum(send_counts)[:-1]]).astype(int).tolist()
    rdis = np.concatenate([[0], np.cumsum(recv_counts)[:-1]]).astype(int).tolist()
    req = comm.Ialltoallv([send, (list(send_counts), sdis), BYTE],
                          [recv, (list(recv_counts), rdis), BYTE])
    work = Work([req], finish, what, comm)
    work._buffers = (send, recv)
    return _done(work, async_op)


def _bytes(a):
    return np.ascontiguousarray(a).reshape(-1).view(np.uint8)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    what = "all_to_all_single"
    comm = _member_comm(group, what, output=output, input=input)
    if comm is None:
        return None
    n = comm.Get_size()
    a, out = input._data, output._data
    if a.ndim == 0 or out.ndim == 0:
        raise ValueError(f"{what}: input and output need at least one dimension")
    if a.shape[1:] != out.shape[1:] or a.dtype != out.dtype:
        raise ValueError(f"{what}: input {list(a.shape)} ({a.dtype}) and output "
                         f"{list(out.shape)} ({out.dtype}) must agree after dim 0")
    row = int(np.prod(a.shape[1:], dtype=np.int64)) * a.itemsize      # bytes per row
    send_rows = _splits(input_split_sizes, a.shape[0], n, what, "input")
    recv_rows = _splits(output_split_sizes, out.shape[0], n, what, "output")
    recv = np.empty(out.nbytes, dtype=np.uint8)
    return _start(comm, _bytes(a), [r * row for r in send_rows], recv,
                  [r * row for r in recv_rows],
                  lambda: _write(output, recv.view(out.dtype)), what, async_op, a.dtype)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    what = "all_to_all"
    comm = comm_for(group, what, non_member_ok=True)
    if comm is None:
        return None
    n = comm.Get_size()
    for arg, lst in (("output_tensor_list", output_tensor_list),
                     ("input_tensor_list", input_tensor_list)):
        if not isinstance(lst, (list, tuple)) or len(lst) != n:
            raise ValueError(f"{what}: {arg} must be a list of world_size={n} tensors")
        for i, t in enumerate(lst):
            _check_tensor(t, what, f"{arg}[{i}]")
    dtypes = {t._data.dtype for t in list(output_tensor_list) + list(input_tensor_list)}
    if len(dtypes) > 1:
        raise ValueError(f"{what}: every tensor must have the same dtype, got "
                         f"{sorted(map(str, dtypes))}")
    send = np.concatenate([_bytes(t._data) for t in input_tensor_list])
    recv_counts = [t._data.nbytes for t in output_tensor_list]
    recv = np.empty(sum(recv_counts), dtype=np.uint8)

    def finish():
        at = 0
        for t, k in zip(output_tensor_list, recv_counts):
            _write(t, recv[at:at + k].view(t._data.dtype))
            at += k
    return _start(comm, send, [t._data.nbytes for t in input_tensor_list], recv,
                  recv_counts, finish, what, async_op, dtypes.pop())
