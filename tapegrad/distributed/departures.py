"""Ranks that left the job: a rank whose process ends, or that destroys its process
group, tells the others; a rank waiting in a collective for one that left fails
within a few seconds instead of hanging.

Why: a rank that ends with status 0 in the middle of training (sys.exit(0), or its
script simply ends) runs MPI_Finalize and waits there, while the others spin in a
collective it will never join, until the group's timeout (30 minutes by default).
torch's gloo sees the peer's socket close and fails the job (torchrun exits 1).

How: on a private duplicate of the world communicator each rank keeps one receive
posted for "rank r left" notices; `announce()` (at exit, or destroy_process_group)
sends its rank to every other. `wait_all` polls the notices while it waits; a notice
from a rank the wait depends on is not at once an error (that rank may have finished
its part of the very collective being waited for, whose data is already on the way):
the wait fails only if it is still unfinished GRACE seconds after the notice arrived.
"""
import os
import time

import numpy as np

__all__ = ["Departures", "GRACE"]

GRACE = 5.0       # seconds a wait may still finish after a rank it needs has left
_TAG = 32002      # within every MPI's tag range (MPI_TAG_UB >= 32767)


class Departures:
    def __init__(self, MPI, world):
        self._MPI = MPI
        self._comm = world.Dup()          # a collective: init_process_group runs on all
        self._me = world.Get_rank()
        self._size = world.Get_size()
        self._buf = np.empty(1, np.int64)
        self._req = self._post()
        self.left = {}                    # global rank -> time.monotonic() we learnt it
        self._announced = False

    def _post(self):
        return self._comm.Irecv(self._buf, source=self._MPI.ANY_SOURCE, tag=_TAG)

    def poll(self):
        """Take every notice that arrived."""
        while self._req is not None and self._req.Test():
            self.left.setdefault(int(self._buf[0]), time.monotonic())
            self._req = self._post()

    def overdue(self, peers):
        """A rank among `peers` (global ranks; None: any) that left more than GRACE
        seconds ago, or None."""
        self.poll()
        now = time.monotonic()
        for rank, seen in self.left.items():
            if (peers is None or rank in peers) and now - seen > GRACE:
                return rank
        return None

    def announce(self):
        """Tell every other rank this one is leaving (once); then stop listening. The
        1-integer messages go out eagerly; their sends are completed (bounded) so that
        no request is left open when MPI is finalised."""
        if self._announced:
            return
        self._announced = True
        me = np.array([self._me], np.int64)
        sends = [self._comm.Isend(me, dest=r, tag=_TAG)
                 for r in range(self._size) if r != self._me]
        deadline = time.monotonic() + 1.0
        yield_ = getattr(os, "sched_yield", lambda: None)
        while sends and not self._MPI.Request.Testall(sends):
            if time.monotonic() > deadline:
                for req in sends:
                    try:
                        req.Free()        # MPI delivers it, or drops it, on its own
                    except self._MPI.Exception:
                        pass
                break
            yield_()
        if self._req is not None:
            try:
                self._req.Cancel()
                self._req.Wait()
            except self._MPI.Exception:
                pass
            self._req = None
