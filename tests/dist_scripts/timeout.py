"""Rank script (2 ranks) for init_process_group(timeout=2 s): rank 1 never joins the
collective named on the command line (all_reduce, barrier, broadcast_object_list, or
ddp: a DDP backward), so rank 0's wait must end with an error naming it after about
2 s. Rank 0 prints how long it waited, then lets the error end the job (as any
uncaught error on a rank does)."""
import datetime
import sys
import time

import tapegrad as tg
import tapegrad.distributed as dist

what = sys.argv[1]
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=2))
r = dist.get_rank()
model = None
if what == "ddp":
    model = tg.nn.parallel.DistributedDataParallel(tg.nn.Linear(3, 1))
if r == 1:
    time.sleep(60)          # never calls it; the job is ended by rank 0's failure
    sys.exit(0)
calls = {"all_reduce": lambda: dist.all_reduce(tg.ones(3)),
         "barrier": lambda: dist.barrier(),
         "broadcast_object_list": lambda: dist.broadcast_object_list([r]),
         "ddp": lambda: model(tg.ones(2, 3)).sum().backward()}
t0 = time.monotonic()
try:
    calls[what]()
except RuntimeError:
    print(f"rank 0 waited {time.monotonic() - t0:.2f} s", flush=True)
    raise
print("finished", flush=True)
