"""L-BFGS (limited-memory BFGS, after minFunc, as PyTorch implements it), with an optional
strong-Wolfe line search.

`step(closure)` runs up to `max_iter` quasi-Newton iterations; `closure()` must zero the
gradients, recompute the loss, call `backward()` and return the loss. All parameters are
treated as one flat vector; the direction comes from the two-loop recursion over the
last `history_size` pairs (s = step taken, y = change in gradient), scaled by
H_diag = y.s / y.y. Without a line search the step length is `lr` (the first iteration
of the first step uses min(1, 1 / |g|_1) * lr); with `line_search_fn="strong_wolfe"` it
is found by bracketing and cubic interpolation (`_strong_wolfe`).

The math works on flat NumPy vectors and NumPy scalars of the parameters' dtype (where
torch keeps 0-d tensors), so float64 runs agree with torch to rounding. The state
(`d`, `t`, `old_dirs`, `old_stps`, `ro`, `H_diag`, `al`, `prev_flat_grad`, `prev_loss`,
`func_evals`, `n_iter`) lives on the first parameter, under torch's names; arrays are
stored as Tensors so `state_dict()` can be saved.
"""
import numpy as np

from .._tensor import Tensor
from .optimizer import Optimizer, _no_grad_step

__all__ = ["LBFGS"]

_ARRAY_KEYS = ("d", "t", "H_diag", "prev_flat_grad")
_LIST_KEYS = ("old_dirs", "old_stps", "ro", "al")


class LBFGS(Optimizer):
    """Only one parameter group; every parameter must be real (as in PyTorch)."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if line_search_fn not in (None, "strong_wolfe"):
            # NOTE: torch defers this to step() ("only 'strong_wolfe' is supported"); saying
            # it at construction, with the same words, loses nothing.
            raise RuntimeError(f"only 'strong_wolfe' is supported, got line_search_fn="
                               f"{line_search_fn!r}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    # ---- the parameters as one flat vector ----------------------------------------------
    def _gather_flat_grad(self):
        # A fresh array (concatenate copies): the closure may zero the grads in place.
        return np.concatenate([np.zeros(p._data.size, p._data.dtype) if p.grad is None
                               else np.ravel(p.grad._data) for p in self._params])

    def _add_grad(self, step_size, update):
        offset = 0
        for p in self._params:
            n = p._data.size
            p._data += step_size * update[offset:offset + n].reshape(p._data.shape)
            offset += n
        self._bump(self._params)

    def _clone_param(self):
        return [p._data.copy() for p in self._params]

    def _set_param(self, params_data):
        for p, data in zip(self._params, params_data):
            p._data[...] = data
        self._bump(self._params)

    def _directional_evaluate(self, closure, x, t, d):
        """Loss and flat gradient at x + t d; the parameters are put back to x."""
        self._add_grad(t, d)
        loss = float(self._closure_loss(closure))
        flat_grad = self._gather_flat_grad()
        self._set_param(x)
        return loss, flat_grad

    @_no_grad_step
    def step(self, closure):
        """Run up to `max_iter` iterations; returns the loss of the FIRST closure call."""
        if closure is None or not callable(closure):
            raise TypeError("LBFGS.step(closure) needs a closure that clears the gradients, "
                            "computes the loss, calls backward() and returns the loss; got "
                            f"{type(closure).__name__}")
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search_fn, history_size = group["line_search_fn"], group["history_size"]
        if line_search_fn not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")

        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = self._closure_loss(closure)
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._gather_flat_grad()
        if np.abs(flat_grad).max() <= tolerance_grad:  # already optimal
            return orig_loss

        s = _unpack(state)
        d, t, old_dirs, old_stps, ro, H_diag = (s.get(k) for k in
                                                ("d", "t", "old_dirs", "old_stps", "ro",
                                                 "H_diag"))
        prev_flat_grad, prev_loss, al = s.get("prev_flat_grad"), s.get("prev_loss"), s.get("al")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:
                if al is None:
                    al = [None] * history_size
                d, H_diag = _lbfgs_direction(flat_grad, prev_flat_grad, d, t, old_dirs,
                                             old_stps, ro, al, H_diag, history_size)
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr
            else:
                t = lr
            gtd = np.dot(flat_grad, d)  # directional derivative
            if gtd > -tolerance_change:
                break

            ls_func_evals = 0
            if line_search_fn is not None:
                x_init = self._clone_param()

                def obj_func(x, t, d):
                    return self._directional_evaluate(closure, x, t, d)

                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    obj_func, x_init, t, d, loss, flat_grad, gtd,
                    max_ls=max_eval - current_evals)
                self._add_grad(t, d)
                opt_cond = np.abs(flat_grad).max() <= tolerance_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    # Re-evaluate only if another iteration will use it (as torch).
                    loss = float(self._closure_loss(closure))
                    flat_grad = self._gather_flat_grad()
                    opt_cond = np.abs(flat_grad).max() <= tolerance_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if np.abs(d * t).max() <= tolerance_change:  # tiny step
                break
            if abs(loss - prev_loss) < tolerance_change:  # no progress in the loss
                break

        state.update(_pack(dict(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro,
                                H_diag=H_diag, prev_flat_grad=prev_flat_grad,
                                prev_loss=prev_loss)))
        if al is not None:
            state["al"] = _pack_list(al)
        return orig_loss


def _lbfgs_direction(flat_grad, prev_flat_grad, d, t, old_dirs, old_stps, ro, al, H_diag,
                     history_size):
    """Update the (s, y) history in place and return the new direction -H g (two-loop
    recursion) and H_diag. Pairs with y.s <= 1e-10 are skipped (curvature condition)."""
    y = flat_grad - prev_flat_grad
    s = d * t
    ys = np.dot(y, s)
    if ys > 1e-10:
        if len(old_dirs) == history_size:  # drop the oldest pair
            old_dirs.pop(0)
            old_stps.pop(0)
            ro.pop(0)
        old_dirs.append(y)
        old_stps.append(s)
        ro.append(1.0 / ys)
        H_diag = ys / np.dot(y, y)
    num_old = len(old_dirs)
    q = -flat_grad
    for i in range(num_old - 1, -1, -1):
        al[i] = np.dot(old_stps[i], q) * ro[i]
        q -= al[i] * old_dirs[i]
    r = q * H_diag
    for i in range(num_old):
        be_i = np.dot(old_dirs[i], r) * ro[i]
        r += (al[i] - be_i) * old_stps[i]
    return r, H_diag


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, g1) and (x2, f2, g2), clipped to bounds
    (default: the interval between x1 and x2); the midpoint if the cubic has none."""
    if bounds is not None:
        xmin_bound, xmax_bound = bounds
    else:
        xmin_bound, xmax_bound = (x1, x2) if x1 <= x2 else (x2, x1)
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, xmin_bound), xmax_bound)
    return (xmin_bound + xmax_bound) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Line search along d from x for a step t meeting the strong Wolfe conditions
    (sufficient decrease c1, curvature c2): bracket, then zoom by cubic interpolation.
    Returns (f_new, g_new, t, number of function evaluations)."""
    d_norm = np.abs(d).max()
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = np.dot(g_new, d)

    # Bracketing phase: grow t until an interval is known to contain a good point.
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        # Extrapolate: interpolate within [t + 0.01 (t - t_prev), 10 t].
        min_step = t + 0.01 * (t - t_prev)
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = np.dot(g_new, d)
        ls_iter += 1
    if ls_iter == max_ls:  # reached the evaluation budget
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # Zoom phase: shrink the bracket until a point meets the conditions.
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # Keep t away from the bracket's ends (minFunc's safeguard against stalling).
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = np.dot(g_new, d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals


# ---- state <-> arrays: Tensors in the state dict, NumPy in the math ---------------------
def _to_array(v):
    if isinstance(v, Tensor):
        a = v._data
        return a[()] if a.ndim == 0 else a  # 0-d: a NumPy scalar of its dtype
    return v


def _unpack(state):
    out = {k: _to_array(state[k]) for k in _ARRAY_KEYS if k in state}
    for k in _LIST_KEYS:
        if k in state:
            out[k] = [_to_array(v) for v in state[k]]
    if "prev_flat_grad" in out:
        out["prev_flat_grad"] = np.array(out["prev_flat_grad"])  # owned, written in place
    out["prev_loss"] = state.get("prev_loss")
    return out


def _wrap(v):
    if isinstance(v, (np.ndarray, np.generic)):
        return Tensor._of(np.array(v))
    return v


def _pack_list(values):
    return [_wrap(v) for v in values]


def _pack(values):
    return {k: (_pack_list(v) if isinstance(v, list) else _wrap(v)) for k, v in values.items()}
