"""Flat optimizer state (torch's `foreach` / `fused` flag, done the NumPy way).

A `FlatPack` keeps one buffer kind (`exp_avg`, `exp_avg_sq`, `step`, ...) of every
parameter of a group as consecutive views of ONE 1-D array. An update then runs a few
whole-buffer NumPy ops instead of ~15 small ones per parameter: on the tiny GPT (29
parameters, ~100k numbers) the per-call cost of NumPy, not the arithmetic, was most of
AdamW's time. The parameters themselves stay separate arrays (users hold them); they are
read through one `np.concatenate` and updated with one in-place add each.

The per-parameter update function stays the reference. A flat update must do the same
elementwise operations in the same order, so both give the same bits (IEEE +, *, /,
sqrt are correctly rounded: the layout cannot change a result), and the tests compare
them bit for bit.

A pack is made only for fresh state (the first step) or state that was just loaded
(`load_state_dict` copies it anyway), so nobody holds the arrays it replaces. When a
step's parameters or state are not exactly the pack's (a parameter without a gradient,
state replaced by hand), the optimizer takes the per-parameter path for that step.
"""
import numpy as np

from .._tensor import Tensor

__all__ = ["FlatPack"]


class FlatPack:
    """Buffers `names` of `params` (one dtype) as views of flat arrays, with scratch."""

    def __init__(self, params, names, dtype, step_dtype=np.float32):
        self.params = tuple(params)
        shapes = [p._data.shape for p in params]
        sizes = [p._data.size for p in params]
        offsets = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        total = offsets[-1]
        self.flat = {}
        self.views = {}
        for name in names:
            if name == "step":  # one 0-d counter per parameter (torch's state layout)
                flat = np.zeros(len(params), step_dtype)
                views = [flat[i:i + 1].reshape(()) for i in range(len(params))]
            else:
                flat = np.zeros(total, dtype)
                views = [flat[a:b].reshape(s) for a, b, s in zip(offsets, offsets[1:], shapes)]
            self.flat[name] = flat
            self.views[name] = views
        # scratch: the gathered gradients, a temporary (reused: no fresh pages each step),
        # and per-parameter views of the update (added to each p), written over the
        # gathered gradients once the update has read them (one buffer less to touch)
        self.grad = np.empty(total, dtype)
        self.tmp = np.empty(total, dtype)
        self.upd = self.grad
        self.upd_views = [self.upd[a:b].reshape(s)
                          for a, b, s in zip(offsets, offsets[1:], shapes)]

    @staticmethod
    def fits(params):
        """Whether `params` can share flat buffers: one real floating dtype, >= 1 param."""
        if not params:
            return False
        dtype = params[0]._data.dtype
        return dtype.kind == "f" and all(p._data.dtype == dtype for p in params)

    def install(self, state, copy_from_state=False):
        """Point each parameter's state at the pack's views (copying loaded values in)."""
        for i, p in enumerate(self.params):
            st = state.setdefault(p, {})
            for name, views in self.views.items():
                if copy_from_state:
                    np.copyto(views[i], np.asarray(st[name]._data, views[i].dtype))
                st[name] = Tensor._of(views[i])  # the view itself, its dtype

    def holds(self, params, state):
        """True when `params` are the pack's, in order, and their state is its views."""
        if len(params) != len(self.params):
            return False
        for i, (p, q) in enumerate(zip(params, self.params)):
            if p is not q:
                return False
            st = state.get(p)
            if st is None:
                return False
            for name, views in self.views.items():
                t = st.get(name)
                if t is None or t._data is not views[i]:
                    return False
        return True
