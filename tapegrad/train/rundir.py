"""Run directories: one default per model, and no silent overwriting of another model's run.

Policy (documented in README): `--out` defaults to `runs/TASK` for the task's default
model and `runs/TASK-MODEL` for the others (`runs/mnist`, `runs/mnist-cnn`,
`runs/names`, `runs/names-gpt`). Re-running the same task and model into its directory
replaces that run, as before; a directory holding a run of another task or model, or
files this job would overwrite that no `tapegrad train` wrote, is refused with a message
suggesting `--out DIR` or `--force`.
"""
import json
import os

from .common import CLIError

__all__ = ["default_out", "claim", "OUTPUT_FILES"]

OUTPUT_FILES = ("metrics.json", "checkpoint.safetensors")


def default_out(task, model, default_model):
    return os.path.join("runs", task if model == default_model else f"{task}-{model}")


def _owner(out):
    """(task, model) of the run in `out`, or None if its files say nothing readable."""
    try:
        with open(os.path.join(out, "metrics.json")) as fh:
            cfg = json.load(fh)["config"]
        return str(cfg["task"]), str(cfg["model"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:  # no (readable) metrics.json: ask the checkpoint
        import tapegrad as tg
        cfg = tg.load(os.path.join(out, "checkpoint.safetensors"))["config"]
        return str(cfg["task"]), str(cfg["model"])
    except Exception:  # a damaged or foreign file: the owner is unknown  # noqa: BLE001
        return None


def claim(out, task, model, force=False):
    """CLIError unless `out` is free for a run of (task, model): empty, missing, or
    holding a run of the same task and model; `force` skips the check."""
    if force or not any(os.path.isfile(os.path.join(out, f)) for f in OUTPUT_FILES):
        return
    owner = _owner(out)
    if owner == (task, model):
        return
    what = (f"a `tapegrad train {owner[0]} --model {owner[1]}` run" if owner is not None
            else "metrics.json / checkpoint.safetensors files of an unknown run")
    raise CLIError(f"output directory {out} already holds {what}; choose another "
                   f"--out DIR, or pass --force to overwrite it")
