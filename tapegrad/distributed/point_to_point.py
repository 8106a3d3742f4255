"""Point-to-point messages, as torch.distributed: send / recv (blocking), isend / irecv
(a Work to `.wait()`). `dst` / `src` are global ranks (or `group_dst` / `group_src`
ranks in `group`); `recv` without `src` takes the next message from any rank and
returns the sender's global rank. Messages with the same `tag` between the same two
ranks arrive in the order they were sent (MPI's rule, and torch's).

The tensor's bytes travel as they are: the receiving tensor must have the sender's
number of bytes (a different length is an error naming both, not a silent partial
fill); its dtype is the receiver's business, as in torch. Every wait is bounded by the
group's timeout, so a send nobody receives ends in an error instead of a hang.
"""
import numpy as np

from .collectives import Work, _member_comm, _root, _write
from .process_group import mpi, resolve

__all__ = ["send", "recv", "isend", "irecv"]


def _peer(rank, group, comm, what, group_rank, arg):
    me = comm.Get_rank()
    peer = _root(rank, group, comm, what, group_rank, arg=arg)
    if peer == me:
        where = "destination" if arg == "dst" else "source"
        raise ValueError(f"Invalid {where} rank: {where} rank should not be the same as "
                         "the rank of the current process.")
    return peer


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Start sending `tensor` to rank `dst`; returns a Work (wait before changing it)."""
    what = "isend"
    comm = _member_comm(group, what, tensor=tensor)
    if comm is None:
        return None
    if dst is None and group_dst is None:
        raise ValueError(f"{what}: give dst (a global rank) or group_dst")
    peer = _peer(dst, group, comm, what, group_dst, "dst")
    buf = np.ascontiguousarray(tensor._data).reshape(-1).view(np.uint8)  # kept by the Work
    req = comm.Isend([buf, mpi().BYTE], dest=peer, tag=int(tag))
    work = Work([req], None, f"send to rank {dst if group_dst is None else group_dst}", comm)
    work._buffer = buf
    work._peer_ranks = (resolve(group, what)._ranks[peer],)
    return work


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    """Send `tensor` to rank `dst`; returns when it may be changed again."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


class RecvWork(Work):
    """The Work of an irecv: after `wait()`, `source_rank()` is the sender's global rank
    (torch's, deprecated there but still used). A message longer than the tensor is
    MPI's truncation error, said in the tensor's terms."""

    def wait(self, timeout=None):
        try:
            return super().wait(timeout)
        except mpi().Exception as e:
            raise self._error(e) from None

    def is_completed(self):
        try:
            return super().is_completed()
        except mpi().Exception as e:
            raise self._error(e) from None

    def _error(self, e):
        MPI = mpi()
        code = e.Get_error_class()
        if code == MPI.ERR_IN_STATUS:  # Testall with statuses: the error is in the status
            code = MPI.Get_error_class(self._statuses[0].Get_error())
        if code != MPI.ERR_TRUNCATE:
            return e
        a = self._tensor._data
        return RuntimeError(f"{self._what}: the message is longer than the receiving tensor "
                            f"(shape {list(a.shape)}, {a.dtype}, {a.nbytes} bytes): both "
                            "sides must use the same shape and dtype")

    def source_rank(self):
        self.wait()
        return self._source


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    """Start receiving into `tensor` from rank `src` (None: any rank); `wait()` writes
    it."""
    what = "irecv"
    comm = _member_comm(group, what, tensor=tensor)
    if comm is None:
        return None
    MPI = mpi()
    peer = (MPI.ANY_SOURCE if src is None and group_src is None
            else _peer(src, group, comm, what, group_src, "src"))
    nbytes = tensor._data.nbytes
    buf = np.empty(nbytes, dtype=np.uint8)
    req = comm.Irecv([buf, MPI.BYTE], source=peer, tag=int(tag))
    ranks = resolve(group, what)._ranks
    statuses = [MPI.Status()]
    sender = "any rank" if peer == MPI.ANY_SOURCE else f"rank {ranks[peer]}"
    work = RecvWork([req], None, f"recv from {sender}", comm)
    work._statuses = statuses
    work._tensor = tensor
    work._peer_ranks = ranks if peer == MPI.ANY_SOURCE else (ranks[peer],)

    def finish():
        st = statuses[0]
        work._source = ranks[st.Get_source()]
        got = st.Get_count(MPI.BYTE)
        if got != nbytes:  # shorter (a longer one is MPI's truncation error: _error)
            raise RuntimeError(
                f"recv: the message from rank {work._source} has {got} bytes, but the "
                f"receiving tensor (shape {list(tensor._data.shape)}, {tensor._data.dtype}) "
                f"has {nbytes}: both sides must use the same shape and dtype")
        _write(tensor, buf[:nbytes].view(tensor._data.dtype))
    work._finish = finish
    return work


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    """Receive into `tensor` from rank `src` (None: any rank); returns the sender's
    global rank."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    return work.source_rank()
