"""Rank script: rank R leaves with exit status 0 in the middle of a loop of collectives
while the others go on. argv[1] is how it leaves:
  os_exit     os._exit(0) (no atexit, no MPI_Finalize)
  sys_exit    sys.exit(0) (a normal end: atexit handlers, MPI_Finalize)
  return      the script just ends (falls off its last line)
  done        (no R) not a fault: the last rank finishes first, right after the world's
              collectives, while the others go on with a group without it and
              point-to-point messages for longer than departures.GRACE: the job must
              succeed (`OK <rank>` from every rank)
argv[2] = R. The job must fail (torchrun's exit code 1), promptly, and no other rank
may print `finished`.
"""
import os
import sys
import time

import tapegrad as tg
import tapegrad.distributed as dist
from tapegrad.distributed.departures import GRACE

dist.init_process_group("gloo")
rank = dist.get_rank()
how = sys.argv[1]
if how == "done":
    W = dist.get_world_size()
    t = tg.ones(3)
    dist.all_reduce(t)
    first = dist.new_group(list(range(W - 1)))
    if rank == W - 1:
        print(f"OK {rank}", flush=True)
        sys.exit(0)
    end = time.monotonic() + GRACE + 2
    while time.monotonic() < end:
        t = tg.ones(3)
        dist.all_reduce(t, group=first)
        assert t.tolist() == [W - 1.0] * 3
        if rank == 1:
            time.sleep(0.5)          # rank 0 waits for this message meanwhile
            dist.send(tg.ones(2), dst=0)
        elif rank == 0:
            got = tg.zeros(2)
            dist.recv(got, src=1)
    print(f"OK {rank}", flush=True)
    sys.exit(0)
bad = int(sys.argv[2])
for step in range(50):
    if step == 2 and rank == bad:
        print(f"leaving {rank}", flush=True)
        if how == "os_exit":
            os._exit(0)
        if how == "sys_exit":
            sys.exit(0)
        break
    t = tg.ones(3)
    dist.all_reduce(t)
else:
    print(f"finished {rank}", flush=True)
