"""`tg.compile` as tape capture and replay.

A training loop builds the same graph every step. The first call of a compiled module
(per guard key) runs eagerly while recording its forward (capture.py); the eager backward
of that step is watched to learn the order gradients are summed in (schedule.py); later
calls whose guards match (guards.py) replay the recorded forward, the same kernels on the
same arrays in the same order, and give the outputs ONE node whose backward runs the
recorded rules in the learned order (replay.py): bit for bit the eager step, without the
per-op Python (dispatch, Tensor and Node objects, the walk's bookkeeping). Anything the
tape cannot replay faithfully runs eagerly for that key, for good (runner.py).

Limits (each checked where it can be, otherwise documented here):
- Python state the guards do not see: a module attribute that is not a plain value (a
  config object), a global, a closure variable. The forward's Python runs only once.
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
