"""The `tapegrad` command (also `python -m tapegrad`).

    tapegrad train mnist [--model mlp] [--epochs N] [--batch-size B] [--lr LR]
                         [--optimizer sgd|adam|adamw] [--seed S] [--data-dir DIR] [--out DIR]
    tapegrad eval CHECKPOINT

Each training task is a module listed in `tapegrad.train.TASKS` (see that package's
docstring for the interface); `train TASK` and `eval` dispatch to it. To add a top-level
command, write `_add_<name>(subparsers)` that sets `func` and call it in `build_parser`.
Errors a user can fix (bad flags, unreadable directories, missing data, a corrupt
checkpoint) print one line on stderr and exit non-zero, without a traceback.
"""
import argparse
import importlib
import sys

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is ONE line: `tapegrad train mnist: error: ...`."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _task(name):
    from .train import TASKS
    return importlib.import_module(TASKS[name])


def _add_train(sub):
    from .train import TASKS
    p = sub.add_parser("train", help="train a model (tapegrad train TASK --help)",
                       description="Train a model with tapegrad's autograd.")
    tasks = p.add_subparsers(dest="task", metavar="TASK", parser_class=_Parser)
    tasks.required = True
    for name in TASKS:
        mod = _task(name)
        tp = tasks.add_parser(name, help=mod.HELP, description=(mod.__doc__ or "").strip(),
                              formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(tp)
        tp.set_defaults(func=lambda args, mod=mod: mod.train(args))


def _add_eval(sub):
    p = sub.add_parser("eval", help="report the test accuracy of a training checkpoint",
                       description="Reload a checkpoint written by `tapegrad train` and "
                                   "report its test accuracy.")
    p.add_argument("checkpoint", metavar="CHECKPOINT",
                   help="checkpoint.npz written by `tapegrad train` (in its --out directory)")
    p.add_argument("--data", default=None, choices=["auto", "mnist", "sample"],
                   help="evaluation data (default: the source the model was trained on)")
    p.add_argument("--data-dir", default=None, metavar="DIR",
                   help="dataset cache directory (default: $TAPEGRAD_DATA or "
                        "~/.cache/tapegrad)")
    p.add_argument("--batch-size", type=int, default=1000, metavar="B",
                   help="evaluation batch size (default: 1000)")
    p.set_defaults(func=_eval)


def _eval(args):
    from .train import TASKS, common
    ck = common.load_checkpoint(args.checkpoint)
    if ck["task"] not in TASKS:
        raise common.CLIError(f"{args.checkpoint} is a checkpoint of task {ck['task']!r}, "
                              "which this tapegrad does not know")
    return _task(ck["task"]).evaluate(ck, args)


def build_parser():
    from . import __version__
    parser = _Parser(prog="tapegrad",
                     description="tapegrad: reverse-mode autodiff on NumPy with a "
                                 "PyTorch-shaped API. Train and evaluate models from the "
                                 "command line.")
    parser.add_argument("--version", action="version", version=f"tapegrad {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    _add_train(sub)
    _add_eval(sub)
    return parser


def main(argv=None):
    """Entry point of the console script; returns the exit code."""
    from .train.common import CLIError
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except CLIError as e:
        print(f"tapegrad: error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("tapegrad: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
