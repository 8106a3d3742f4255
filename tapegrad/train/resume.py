"""`--resume CKPT`: what a training checkpoint keeps besides the weights, and the checks
that make a resumed run continue exactly like one that was never stopped.

A checkpoint written by `tapegrad train` holds, next to "model" and "optimizer":

    "resume": {"counter": k,          epochs (mnist) or steps (names) done
               "elapsed": seconds,    training time so far (metrics' "seconds" continue)
               "history": {...},      the per-evaluation lists of metrics.json so far
               "rng": {name: state}}  every random generator the loop draws from:
                                      tapegrad's global one (dropout), the data loader's
                                      (its next shuffle), NumPy's (names' minibatches)

The generator states are PCG64 state dicts (two 128-bit integers): plain metadata in the
safetensors header, no pickle. An LR schedule needs no state of its own: both trainers
compute the rate from the step counter.

Resuming checks that the command describes the same run (`check_config`): every config
value but the ones a task lets differ (mnist: --epochs, --threads) must match, else one
line names the checkpoint and the flag.
"""
import contextlib
import os

import numpy as np

from .common import CLIError, bad_checkpoint, load_checkpoint

__all__ = ["add_argument", "refuse_with_ranks", "state", "load", "check_config",
           "restore_rng", "restore_optimizer", "generator_state"]

KEY = "resume"


def add_argument(p, unit):
    p.add_argument("--resume", default=None, metavar="CKPT",
                   help=f"continue the run CKPT (a checkpoint.safetensors this command "
                        f"wrote) from its last {unit}, exactly as if it had not stopped: "
                        f"weights, optimizer, random generators and counters are restored; "
                        f"give the same flags as that run")


def refuse_with_ranks(args):
    """--resume restores one process's generators: refuse it with --nproc N > 1."""
    if getattr(args, "resume", None) and getattr(args, "nproc", 1) > 1:
        raise CLIError(f"--resume {args.resume}: resuming works with one process; it "
                       f"cannot be combined with --nproc {args.nproc}")


def generator_state(gen):
    """The state of a tapegrad.Generator or a numpy.random.Generator."""
    if isinstance(gen, np.random.Generator):
        return gen.bit_generator.state
    return gen.get_state()


def _set_generator_state(gen, st):
    if isinstance(gen, np.random.Generator):
        gen.bit_generator.state = st
    else:
        gen.set_state(st)


def state(counter, elapsed, history, generators):
    """The "resume" entry of a checkpoint; `generators` maps a name to a generator."""
    return {"counter": int(counter), "elapsed": float(elapsed),
            "history": {k: list(v) for k, v in history.items()},
            "rng": {name: generator_state(g) for name, g in generators.items()}}


def load(path, task):
    """load_checkpoint(path, task) plus the checks on its resume entry (one-line errors
    naming the file)."""
    ck = load_checkpoint(path, task)
    r = ck.get(KEY)
    if not isinstance(r, dict):
        raise bad_checkpoint(path, "it has no resume state (written by an older tapegrad?)")
    counter, elapsed = r.get("counter"), r.get("elapsed")
    if not isinstance(counter, int) or isinstance(counter, bool) or counter < 0:
        raise bad_checkpoint(path, f"its resume counter is {counter!r}")
    if not isinstance(elapsed, float) or not elapsed >= 0:
        raise bad_checkpoint(path, f"its resume time is {elapsed!r}")
    hist = r.get("history")
    if not isinstance(hist, dict) or not all(isinstance(v, list) for v in hist.values()):
        raise bad_checkpoint(path, "its metrics history is not a dict of lists")
    if not isinstance(r.get("rng"), dict):
        raise bad_checkpoint(path, "it has no random-generator states")
    if not isinstance(ck.get("optimizer"), dict):
        raise bad_checkpoint(path, "it has no optimizer state")
    return ck


def out_dir(args, default):
    """Where a run writes: --out if given; else, for --resume CKPT, the checkpoint's own
    directory (a resumed run continues where it was, and never replaces the run in the
    default directory); else `default`."""
    if getattr(args, "out", None):
        return args.out
    if getattr(args, "resume", None):
        return os.path.dirname(args.resume) or "."
    return default


def _flag_text(key, value):
    if isinstance(value, list):
        value = ",".join(map(str, value))
    return f"--{key.replace('_', '-')} {value}"


def check_config(ck, path, config, free=()):
    """CLIError unless `config` (this command's) equals the checkpoint's on every key
    but `free`: a resumed run must be the same run."""
    old = ck["config"]
    keys = sorted(set(old) | set(config), key=lambda k: (k != "model", k))  # model first
    for key in keys:
        if key in free:
            continue
        a, b = old.get(key, "<missing>"), config.get(key, "<missing>")
        if a != b:
            raise CLIError(f"cannot resume from {path}: it was trained with "
                           f"{_flag_text(key, a)}, this command has {_flag_text(key, b)}; "
                           "give the same flags as the run it continues")


def restore_rng(ck, path, generators):
    """Set each generator in `generators` (name -> generator) to its saved state."""
    saved = ck[KEY]["rng"]
    for name, gen in generators.items():
        if name not in saved:
            raise bad_checkpoint(path, f"it has no state of the {name} random generator")
        try:
            _set_generator_state(gen, saved[name])
        except (TypeError, ValueError, KeyError) as e:
            raise bad_checkpoint(path, f"its {name} random-generator state is damaged "
                                       f"({e})") from None


def restore_optimizer(ck, path, optimizer):
    try:
        optimizer.load_state_dict(ck["optimizer"])
    except Exception as e:  # noqa: BLE001 - wrong groups/shapes/keys: all one message
        first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise bad_checkpoint(path, f"its optimizer state does not fit: {first}") from None


@contextlib.contextmanager
def note_on_interrupt(last):
    """Ctrl-C in the block: re-raise KeyboardInterrupt with a note on how to continue.
    `last` is a dict the loop fills with the latest checkpoint: {"path", "n", "unit"}."""
    try:
        yield
    except KeyboardInterrupt:
        if not last:
            raise
        raise KeyboardInterrupt(
            f"{last['path']} holds the run after {last['unit']} {last['n']}; continue it "
            f"with the same flags and --resume {last['path']}") from None
