"""`tg.compile` as tape capture and replay (issue 15).

A training loop builds the same graph every step. The first call of a compiled module
(per guard key) runs eagerly while recording its forward (capture.py); the eager backward
of that step is watched to learn the order gradients are summed in (schedule.py); later
calls whose guards match (guards.py) replay the recorded forward, the same kernels on the
same arrays in the same order, and give the outputs ONE node whose backward runs the
recorded rules in the learned order (replay.py): bit for bit the eager step, without the
per-op Python (dispatch, Tensor and Node objects, the walk's bookkeeping). Anything the
tape cannot replay faithfully runs eagerly for that key, for good (runner.py).
"""
from .api import OptimizedModule, compile

__all__ = ["OptimizedModule", "compile"]
