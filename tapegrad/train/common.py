"""Shared pieces of the training jobs: CLI errors, seeding, epoch loops with a progress
bar, the non-finite loss check, metrics.json, the curves picture and checkpoints."""
import json
import math
import os
import sys
import time

import numpy as np

import tapegrad as tg


class CLIError(Exception):
    """A user-facing error: `tapegrad` prints its message on one line and exits 1."""


def notice(msg):
    """One-line notice on stderr (kept out of stdout, which carries the results)."""
    print(f"note: {msg}", file=sys.stderr, flush=True)


def ensure_dir(path, what, write=True):
    """Create `path` if needed; a clear CLIError if it is a file or not usable.
    `write=False`: reading is enough (a read-only data cache that holds every file)."""
    path = os.path.abspath(os.path.expanduser(path))
    if os.path.exists(path) and not os.path.isdir(path):
        raise CLIError(f"{what} {path} exists and is not a directory")
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as e:
        raise CLIError(f"cannot create {what} {path}: {e.strerror or e}") from None
    if not os.access(path, os.R_OK | os.X_OK | (os.W_OK if write else 0)):
        raise CLIError(f"{what} {path} is not readable" + (" and writable" if write else ""))
    return path


def blas_threads(n):
    """Context manager limiting the BLAS thread pool to `n` threads (threadpoolctl).

    Why the default is 1: the matmuls of small models (64 x 784 x 256) gain little from
    more threads, and when the cores are busy (tests running in parallel, other jobs)
    OpenBLAS threads spin against each other: measured 20x slower per matmul at load 12
    on 2 cores. One thread also makes runs bit-reproducible across machines with
    different core counts. Without threadpoolctl this does nothing."""
    import contextlib
    if n is None or n <= 0:
        return contextlib.nullcontext()
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=int(n), user_api="blas")


def make_optimizer(name, params, lr, weight_decay=0.0):
    name = name.lower()
    if name == "sgd":
        return tg.optim.SGD(params, lr=lr, momentum=0.9, weight_decay=weight_decay)
    if name == "adam":
        return tg.optim.Adam(params, lr=lr, weight_decay=weight_decay)
    if name == "adamw":
        return tg.optim.AdamW(params, lr=lr, weight_decay=weight_decay or 1e-2)
    raise CLIError(f"unknown optimizer {name!r} (choose sgd, adam, adamw)")


def _bar(iterable, total, desc, enabled, initial=0):
    """A tqdm bar on stderr over `iterable` (None when disabled or tqdm is missing);
    `initial`: the position a resumed run starts at."""
    if enabled:
        try:
            from tqdm import tqdm
            return tqdm(iterable, total=total, desc=desc, leave=False, dynamic_ncols=True,
                        file=sys.stderr, initial=initial)
        except ImportError:
            pass
    return None


def closing_bar(bar):
    """Context manager closing `bar` (if any) however the block ends."""
    import contextlib
    return contextlib.closing(bar) if bar is not None else contextlib.nullcontext()


def progress_bar(iterable, total, desc, enabled=True, initial=0):
    """(iterable to loop over, bar or None): the loop runs the same with or without it."""
    bar = _bar(iterable, total, desc, enabled, initial)
    return (bar if bar is not None else iterable), bar


def check_loss(value, where, optimizer, lr=None):
    """CLIError if the loss `value` (a float already fetched for logging) is NaN or
    infinite: every later step would only spread it, and the run would end "successfully"
    with garbage weights. `where` names the step ("epoch 2, step 17"); `lr` is the
    --lr the user gave when a schedule changes the optimizer's."""
    if not math.isfinite(value):
        group = optimizer.param_groups[0] if optimizer.param_groups else {}
        lr, wd = lr if lr is not None else group.get("lr"), group.get("weight_decay") or 0.0
        if isinstance(lr, (int, float)) and wd > 1 and lr * wd > 1:
            # decay by lr * wd > 1 per step flips and grows the weights by itself
            hint = (f"--weight-decay {wd:g} with --lr {lr:g} is too strong: try a lower "
                    "--weight-decay or --lr")
        else:
            at = f" (--lr {lr:g})" if isinstance(lr, (int, float)) else ""
            hint = f"the learning rate{at} is probably too high: try a lower --lr"
        raise CLIError(f"the training loss became {value} at {where}; stopping. {hint}")


def train_epoch(model, loader, optimizer, loss_fn, desc, progress=True, clip=None,
                scheduler=None):
    """One pass over `loader`: forward, loss, backward, step (then `scheduler.step()`, a
    per-batch lr schedule such as OneCycleLR). Returns (mean loss, accuracy) over the
    epoch (accuracy = fraction of argmax(logits) == label). The progress bar shows the
    running values. A non-finite loss stops the run (CLIError naming the step)."""
    model.train()
    total_loss, correct, seen = 0.0, 0, 0
    it, bar = progress_bar(loader, len(loader), desc, progress)
    with closing_bar(bar):   # closed (its line cleared) before an error is printed too
        for i, (xb, yb) in enumerate(it):
            optimizer.zero_grad()
            logits = model(xb)                       # (B, classes)
            loss = loss_fn(logits, yb)               # mean over the batch
            value = float(loss.item())               # fetched anyway for the epoch mean
            check_loss(value, f"{desc}, step {i + 1}", optimizer)
            loss.backward()
            if clip:
                tg.nn.utils.clip_grad_norm_(model.parameters(), clip)
            optimizer.step()
            if scheduler is not None:
                scheduler.step()
            n = yb.shape[0]
            total_loss += value * n
            correct += int((logits._data.argmax(axis=1) == yb._data).sum())
            seen += n
            if bar is not None and (i % 10 == 0 or i == len(loader) - 1):
                bar.set_postfix(loss=f"{total_loss / seen:.4f}",
                                acc=f"{correct / seen:.2%}", refresh=False)
    return total_loss / max(seen, 1), correct / max(seen, 1)


def evaluate(model, X, Y, loss_fn, batch_size=1000):
    """(mean loss, accuracy) of `model` on tensors X, Y, in eval mode without a graph."""
    model.eval()
    total_loss, correct = 0.0, 0
    n = X.shape[0]
    with tg.no_grad():
        for s in range(0, n, batch_size):
            xb = tg.from_numpy(X._data[s:s + batch_size])
            yb = tg.from_numpy(Y._data[s:s + batch_size])
            logits = model(xb)
            total_loss += float(loss_fn(logits, yb).item()) * yb.shape[0]
            correct += int((logits._data.argmax(axis=1) == yb._data).sum())
    return total_loss / max(n, 1), correct / max(n, 1)


def write_json(path, obj):
    tmp = path + ".tmp"
    with open(tmp, "w") as fh:
        json.dump(obj, fh, indent=2)
        fh.write("\n")
    os.replace(tmp, path)


def _pyplot():
    """matplotlib.pyplot with the file-only Agg backend, or None (with a notice)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        notice("matplotlib is not installed; skipping the curves picture "
               "(pip install matplotlib)")
        return None
    return plt


def plot_panels(panels, path, title):
    """One PNG of side-by-side panels, the style of every trainer's curves.png.
    `panels`: [(xlabel, ylabel, x, [(label, values, marker), ...]), ...]. Returns the
    path, or None (with a notice) if matplotlib is missing."""
    plt = _pyplot()
    if plt is None:
        return None
    fig, axes = plt.subplots(1, len(panels), figsize=(max(6, 4 * len(panels)), 3.2),
                             dpi=100, squeeze=False)
    for ax, (xlabel, ylabel, x, lines) in zip(axes[0], panels):
        for label, values, marker in lines:
            ax.plot(x, values, marker, label=label)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.legend()
        ax.grid(alpha=0.3)
        ax.xaxis.get_major_locator().set_params(integer=True)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return path


def plot_curves(metrics, path, title):
    """Loss (left) and accuracy (right) per epoch, train and test, as a PNG. Returns the
    path, or None (with a notice) if matplotlib is missing."""
    epochs = np.arange(1, len(metrics["train_loss"]) + 1)
    pct = lambda k: np.array(metrics[k]) * 100  # noqa: E731
    return plot_panels(
        [("epoch", "cross-entropy loss", epochs,
          [("train", metrics["train_loss"], "o-"), ("test", metrics["test_loss"], "s-")]),
         ("epoch", "accuracy (%)", epochs,
          [("train", pct("train_accuracy"), "o-"), ("test", pct("test_accuracy"), "s-")])],
        path, title)


def files_written(paths):
    """"a, b, c": the files a run wrote (`paths`: strings, lists of them, Nones)."""
    flat = []
    for p in paths:
        flat += [q for q in p if q] if isinstance(p, (list, tuple)) else [p] if p else []
    return ", ".join(flat)


def bad_checkpoint(path, reason):
    """The one error for every unusable checkpoint: it names the file."""
    return CLIError(f"not a valid checkpoint: {path}: {reason}")


def _load_reason(exc, path):
    """tg.load's message without the parts the one-line error says already
    ("tg.load: 'run/ck.npz' is truncated ..." -> "truncated ...")."""
    reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    if reason.startswith("tg.load: "):
        reason = reason[len("tg.load: "):]
    p = os.fspath(path)
    for prefix in (f"{p!r} is ", f"{p} is ", f"{p!r}: ", f"{p}: "):
        if reason.startswith(prefix):
            return reason[len(prefix):]
    if isinstance(exc, OSError) and exc.strerror:   # e.g. IsADirectoryError
        return exc.strerror
    return reason


def load_checkpoint(path, task=None):
    """tg.load a training checkpoint; any problem becomes a one-line CLIError naming the
    file. With `task`, a checkpoint of another task is refused too."""
    if not os.path.exists(path):
        raise CLIError(f"checkpoint {path} does not exist")
    try:
        ck = tg.load(path)
    except Exception as e:  # noqa: BLE001 - damaged files raise all sorts; none may escape
        raise bad_checkpoint(path, _load_reason(e, path)) from None
    if not isinstance(ck, dict) or ck.get("format") != "tapegrad-train" or "task" not in ck:
        raise CLIError(f"{path} is a tapegrad file but not a training checkpoint "
                       "(written by `tapegrad train`)")
    if not isinstance(ck["task"], str):
        raise bad_checkpoint(path, f"its task is {ck['task']!r}, not a name")
    if not isinstance(ck.get("config"), dict) or not isinstance(ck.get("model"), dict):
        raise bad_checkpoint(path, "it has no config or no model state dict")
    if not all(hasattr(v, "shape") for v in ck["model"].values()):
        raise bad_checkpoint(path, "its model state dict holds values that are not tensors")
    if task is not None and ck["task"] != task:
        raise bad_checkpoint(path, f"it is a checkpoint of task {ck['task']!r}, not {task!r}")
    return ck


def state_numel(state):
    """Number of values in a state dict (tensors' element counts)."""
    return sum(math.prod(int(d) for d in v.shape) for v in state.values())


def config_value(ck, path, key, kind, lo=None):
    """ck["config"][key], checked to be of `kind` (and >= lo): a damaged or foreign config
    is refused naming the file and the key instead of failing deep in a model builder."""
    cfg = ck["config"]
    if key not in cfg:
        raise bad_checkpoint(path, f"its config has no {key!r}")
    v = cfg[key]
    if not isinstance(v, kind) or isinstance(v, bool) or (lo is not None and v < lo):
        raise bad_checkpoint(path, f"its config has {key}={v!r}")
    return v


def load_weights(model, ck, path, what):
    """model.load_state_dict(ck["model"]) (strict); a mismatch names the file."""
    try:
        model.load_state_dict(ck["model"])
    except Exception as e:  # noqa: BLE001 - missing/unexpected keys, shapes, dtypes
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise bad_checkpoint(path, f"its weights do not fit the {what} model: {first}") from None
    return model


class Timer:
    def __enter__(self):
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self.t0
        return False
