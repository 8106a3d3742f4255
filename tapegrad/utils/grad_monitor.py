"""GradMonitor: per-layer gradient health over training, with warnings and plots.

    monitor = tg.utils.GradMonitor(model, optimizer)
    for x, y in loader:
        optimizer.zero_grad()
        loss = loss_fn(model(x), y)
        loss.backward()
        optimizer.step()
        monitor.step()              # after backward (before or after optimizer.step)
    monitor.plot("runs/health")     # PNG files: grad norms, update ratios, activations

`GradMonitor(model, optimizer, auto_step=True)` calls `monitor.step()` itself, inside
`optimizer.step()` (so a training loop needs no change; gradients are seen after any
clipping done before the step).

Each step it records, per parameter (names from `model.named_parameters()`):
  grad_norm     ||grad||_2
  update_ratio  ||p_after - p_before||_2 / ||p_before||_2, the size of the optimizer's
                step relative to the weights (around 1e-3 is healthy for SGD/Adam in
                Karpathy's rule of thumb; 1e-1 means the weights are being rewritten,
                1e-6 means they barely move). Needs the optimizer (its `step` is
                wrapped to snapshot the weights) or calls to `before_step()` and
                `after_step()` around your own update.
and per activation module (forward hooks on nn.ReLU / nn.Tanh / nn.Sigmoid layers):
  ReLU     dead fraction: units (features, or channels for (N, C, ...) outputs) that
           are 0 for EVERY example of the batch (no gradient reaches their weights)
  Tanh     saturated fraction: |tanh| > 0.97 (local derivative 1 - t^2 < 0.06)
  Sigmoid  saturated fraction: s < 0.03 or s > 0.97

Warnings (`warnings.warn(GradHealthWarning)`, once per kind and layer; every finding
is also kept in `monitor.findings`):
  vanishing  the first weight's grad norm < vanish_ratio x the last weight's (orders
             of magnitude: early layers learn nothing)
  exploding  a grad norm above explode_norm, or not finite
  dead       a ReLU layer with more than dead_fraction of its units dead
  saturated  a tanh/sigmoid layer with more than saturated_fraction saturated
Only forward calls made with grad enabled (training) are counted.
"""
import math
import warnings

import numpy as np

from ..core import grad_mode

__all__ = ["GradMonitor", "GradHealthWarning"]


class GradHealthWarning(UserWarning):
    """Gradients vanish or explode, or activations are dead or saturated."""


def _norm(a):
    a = np.asarray(a, dtype=np.float64)
    return float(np.sqrt(np.sum(a * a)))


class GradMonitor:
    def __init__(self, model, optimizer=None, *, auto_step=False, vanish_ratio=1e-3,
                 explode_norm=1e3, dead_fraction=0.5, saturated_fraction=0.5, warn=True):
        from .. import nn
        self.model = model
        self.params = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
        self.vanish_ratio = vanish_ratio
        self.explode_norm = explode_norm
        self.dead_fraction = dead_fraction
        self.saturated_fraction = saturated_fraction
        self.warn = warn
        self.steps = 0
        self.grad_norm = {n: [] for n, _ in self.params}     # name -> one value per step
        self.update_ratio = {n: [] for n, _ in self.params}
        self.activation = {}                                  # layer -> one value per step
        self.activation_kind = {}                             # layer -> "dead"/"saturated"
        self.activation_type = {}                             # layer -> "ReLU", "Tanh", ...
        self.findings = []                                    # (step, kind, message)
        self._warned = set()
        self._act_sum = {}
        self._snapshot = None
        self._pending_ratio = None
        self._awaiting_ratio = False
        self._handles = []
        kinds = ((nn.ReLU, "dead"), (nn.Tanh, "saturated"), (nn.Sigmoid, "saturated"))
        for name, mod in model.named_modules():
            for cls, kind in kinds:
                if isinstance(mod, cls):
                    label = name or type(mod).__name__
                    self.activation[label] = []
                    self.activation_kind[label] = kind
                    self.activation_type[label] = type(mod).__name__
                    self._handles.append(mod.register_forward_hook(self._act_hook(label, mod)))
        self.optimizer = None
        self.auto_step = auto_step
        if optimizer is not None:
            self.watch(optimizer)

    # ---- hooks ----------------------------------------------------------------------
    def _act_hook(self, label, mod):
        from .. import nn

        def hook(module, args, out):
            if not grad_mode.is_grad_enabled():
                return None
            a = out._data
            if isinstance(mod, nn.ReLU):
                if a.ndim >= 2:  # a unit: a feature (N, F) or a channel (N, C, ...)
                    alive = np.any(a > 0, axis=tuple(k for k in range(a.ndim) if k != 1))
                else:
                    alive = a > 0
                v = 1.0 - float(np.mean(alive))
            elif isinstance(mod, nn.Tanh):
                v = float(np.mean(np.abs(a) > 0.97))
            else:
                v = float(np.mean((a < 0.03) | (a > 0.97)))
            s, n = self._act_sum.get(label, (0.0, 0))
            self._act_sum[label] = (s + v, n + 1)
            return None
        return hook

    def watch(self, optimizer):
        """Wrap `optimizer.step` so each update's size is recorded (update_ratio)."""
        self.optimizer = optimizer
        inner = optimizer.step

        def step(*args, **kwargs):
            if self.auto_step:   # the gradients are complete when the optimizer steps
                self.step()
            self.before_step()
            out = inner(*args, **kwargs)
            self.after_step()
            return out
        optimizer.step = step
        self._unwatch = lambda: optimizer.__dict__.pop("step", None)
        return self

    def before_step(self):
        """Snapshot the parameters (call right before the optimizer updates them)."""
        self._snapshot = {n: p._data.astype(np.float64, copy=True) for n, p in self.params}

    def after_step(self):
        """Compute ||p_after - p_before|| / ||p_before|| since `before_step()`."""
        if self._snapshot is None:
            raise RuntimeError("GradMonitor.after_step() needs before_step() first")
        ratios = {}
        for n, p in self.params:
            old = self._snapshot[n]
            d = _norm(p._data - old)
            base = _norm(old)
            ratios[n] = d / base if base > 0 else (0.0 if d == 0 else math.inf)
        self._snapshot = None
        if self._awaiting_ratio:          # monitor.step() already ran for this step
            self._store_ratios(ratios)
            self._awaiting_ratio = False
        else:
            self._pending_ratio = ratios

    def _store_ratios(self, ratios):
        for n, _ in self.params:
            lst = self.update_ratio[n]
            while len(lst) < self.steps - 1:
                lst.append(math.nan)
            lst.append(ratios.get(n, math.nan))

    # ---- the per-step record ------------------------------------------------------------
    def step(self):
        """Record this step's gradient norms and activation statistics; returns the new
        findings (also warned about)."""
        self.steps += 1
        for n, p in self.params:
            self.grad_norm[n].append(math.nan if p.grad is None else _norm(p.grad._data))
        for label, lst in self.activation.items():
            s, k = self._act_sum.get(label, (0.0, 0))
            lst.append(s / k if k else math.nan)
        self._act_sum = {}
        if self._pending_ratio is not None:
            self._store_ratios(self._pending_ratio)
            self._pending_ratio = None
        elif self.optimizer is not None:
            self._awaiting_ratio = True
        return self.check()

    def last(self, series):
        """{name: latest value} of one of grad_norm / update_ratio / activation."""
        return {k: v[-1] for k, v in series.items() if v}

    def check(self):
        """Findings of the latest step: list of (kind, name, message)."""
        out = []
        norms = self.last(self.grad_norm)
        weights = [n for n, p in self.params
                   if p.ndim >= 2 and not math.isnan(norms.get(n, math.nan))]
        if len(weights) >= 2:
            first, last = weights[0], weights[-1]
            a, b = norms[first], norms[last]
            if math.isfinite(a) and math.isfinite(b) and b > 0 and a < self.vanish_ratio * b:
                out.append(("vanishing", first,
                            f"vanishing gradients: {first} has grad norm {a:.3g}, "
                            f"{b / max(a, 1e-300):.3g}x smaller than {last} ({b:.3g}); the "
                            "early layers barely learn (saturating activations? too deep "
                            "without normalization or residual connections?)"))
        for n, v in norms.items():
            if not math.isfinite(v) or v > self.explode_norm:
                out.append(("exploding", n,
                            f"exploding gradients: {n} has grad norm {v:.3g} (> "
                            f"{self.explode_norm:g}); lower the learning rate, clip "
                            "gradients (nn.utils.clip_grad_norm_) or check the loss scale"))
        for label, v in self.last(self.activation).items():
            kind = self.activation_kind[label]
            limit = self.dead_fraction if kind == "dead" else self.saturated_fraction
            if not math.isnan(v) and v > limit:
                what = ("units are dead (0 for every example: no gradient reaches them)"
                        if kind == "dead" else "of the activations are saturated (local "
                        "derivative near 0)")
                out.append((kind, label, f"{label}: {v:.0%} {what}"))
        for kind, name, msg in out:
            self.findings.append((self.steps, kind, msg))
            if self.warn and (kind, name) not in self._warned:
                self._warned.add((kind, name))
                warnings.warn(f"step {self.steps}: {msg}", GradHealthWarning, stacklevel=3)
        return out

    def layer_label(self, label):
        """An activation layer as plots and tables name it: `2 (ReLU)` (a Sequential's
        child is named by its index alone, which says nothing)."""
        kind = self.activation_type.get(label)
        return label if kind is None or kind == label else f"{label} ({kind})"

    def summary(self):
        """Text tables of the latest step: one row per parameter, then (under a header
        of their own columns) one row per activation layer."""
        norms, ratios = self.last(self.grad_norm), self.last(self.update_ratio)
        acts = self.last(self.activation)
        labels = {a: self.layer_label(a) for a in acts}
        w = max([len(n) for n, _ in self.params] + [len(x) for x in labels.values()] + [10])
        lines = [f"{'parameter':<{w}} {'shape':>14} {'grad norm':>10} {'update/data':>12}"]
        for n, p in self.params:
            lines.append(f"{n:<{w}} {str(tuple(p.shape)):>14} {norms.get(n, math.nan):10.3g} "
                         f"{ratios.get(n, math.nan):12.3g}")
        if acts:
            lines.append(f"{'activation':<{w}} {'measure':>14} {'fraction':>10}")
            for label, v in acts.items():
                lines.append(f"{labels[label]:<{w}} {self.activation_kind[label]:>14} "
                             f"{v:10.1%}")
        return "\n".join(lines)

    def remove(self):
        """Remove the forward hooks and unwrap the optimizer."""
        for h in self._handles:
            h.remove()
        self._handles = []
        if self.optimizer is not None:
            self._unwatch()
            self.optimizer = None

    # ---- plots -----------------------------------------------------------------------------
    def plot(self, prefix="grad_health", title=None):
        """Write `<prefix>_grad_norm.png`, `<prefix>_update_ratio.png` and (when there are
        activation layers) `<prefix>_activations.png`; returns the paths. Each plot has a
        title (after `title`, e.g. the model's name, when given); lines are labelled by
        parameter name, activation layers by name and type (`2 (ReLU)`)."""
        import os

        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        d = os.path.dirname(prefix)
        if d:
            os.makedirs(d, exist_ok=True)
        paths = []
        series = [("grad_norm", self.grad_norm, "gradient norm ||grad||", True,
                   "gradient norm per parameter"),
                  ("update_ratio", self.update_ratio, "update / data  ||dp|| / ||p||", True,
                   "update-to-data ratio per parameter (about 1e-3 is healthy)")]
        if self.activation:
            series.append(("activations", self.activation,
                           "dead (ReLU) / saturated (tanh, sigmoid) fraction", False,
                           "dead or saturated units per activation layer"))
        for key, data, ylabel, log, what in series:
            if not any(len(v) for v in data.values()):
                continue
            fig, ax = plt.subplots(figsize=(8, 4.5))
            for name, vals in data.items():
                if vals:
                    label = self.layer_label(name) if data is self.activation else name
                    ax.plot(np.arange(1, len(vals) + 1), vals, label=label)
            ax.set_title(f"{title}: {what}" if title else what, fontsize=10)
            if log:
                ax.set_yscale("log")
            else:                             # a fraction: 0..1, never a negative axis
                ax.set_ylim(-0.02, 1.02)
            ax.set_xlabel("step")
            ax.set_ylabel(ylabel)
            ax.legend(fontsize=7, ncol=2)
            ax.grid(alpha=0.3)
            fig.tight_layout()
            path = f"{prefix}_{key}.png"
            fig.savefig(path, dpi=100)
            plt.close(fig)
            paths.append(path)
        return paths
