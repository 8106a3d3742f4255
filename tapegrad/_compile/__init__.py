"""`tg.compile` as tape capture and replay (issues 15 and 30).

A training loop builds the same graph every step. The first call of a compiled module
(per guard key) runs eagerly while recording its forward (capture.py); the eager backward
of that step is watched to learn the order gradients are summed in (schedule.py); later
calls whose guards match (guards.py) replay the recorded forward, the same kernels on the
same arrays in the same order, and give the outputs ONE node whose backward runs the
recorded rules in the learned order (replay.py): bit for bit the eager step, without the
per-op Python (dispatch, Tensor and Node objects, the walk's bookkeeping). Anything the
tape cannot replay faithfully runs eagerly for that key, for good (runner.py).

Whole steps (issue 30): a compiled function that calls zero_grad, the forward, the loss,
`backward()` and `optimizer.step()` (clip_grad_norm_, a scheduler) is captured whole: the
library calls become call steps (run again as they are: hyperparameters read at replay
time), the backward a backward step (capture.py), and every plan is replayed as one
generated straight-line function (codegen.py; `compiled.explain()` prints it).

Python values: every global and closure variable the captured call's own code (the
user's, not the library's) read is a guard (python_guards.py); a changed one captures
again (a key keeps up to `tapegrad._dynamo.config.recompile_limit` captures in all, then
runs eagerly with one warning). A data-dependent read (`.item()`, `bool()`, an index
computed from values) is a graph break: the call runs eagerly (right results), or raises
`tapegrad._dynamo.exc.Unsupported` under `fullgraph=True`. One read is replayed: `.item()`
floats the function returns at its very end (`return loss.item()`, a dict of them), after
every op, its own code doing nothing else with them (tail_reads.py watches its last
bytecode); the replay returns the replayed array's `.item()`.

Limits (each checked where it can be, otherwise documented here):
- Python state the guards do not see: what is read through an object (a config
  object's attribute, a list's items: the object is guarded by identity only), a module
  attribute that is not a plain value. The forward's Python runs only once per capture.
- A tensor read from a global or closure (not an argument, parameter or buffer) keeps
  the call eager: pass it as an argument to have it replayed.
- Whole steps: a library call with effects other than the hooked ones (Optimizer.step and
  zero_grad, Module.zero_grad and train, clip_grad_norm_, LRScheduler.step) runs only
  while capturing (tg.manual_seed inside the step would not be repeated); a store into a
  global container (`stats[k] = v`) is not detected. A GradScaler step runs eagerly (its
  scale is read through an object the guards do not see; its inf check reads values).
  The tensors a replayed whole step returns carry no graph (their backward already ran).
- A graph break makes the whole call eager for that key (torch replays the part before
  it); under a profiler (sys.setprofile in use) captures run eagerly.
- What the captured step's backward showed is assumed of later steps: a replayed
  backward that starts from other outputs raises (loud, not wrong); so does
  create_graph=True through a replayed node (compile with disable=True for that).
  A parameter that also gets gradient from outside the compiled call in the captured
  step keeps that key eager; one that starts doing so later may be summed in another order.
- A compiled callable is for one thread at a time (its capture state is per callable).
- Memory: a capture keeps its step's arrays until the next call (its backward is being
  learned); a replay frees each step's arrays as its rules run, as eager does.
"""
from .api import OptimizedModule, compile

__all__ = ["OptimizedModule", "compile"]
