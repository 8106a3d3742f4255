"""The `tapegrad` command (also `python -m tapegrad`).

    tapegrad train mnist [--model mlp] [--epochs N] [--batch-size B] [--lr LR]
                         [--optimizer sgd|adam|adamw] [--seed S] [--data-dir DIR] [--out DIR]
                         [--resume CKPT]   (continue a stopped run; also for train names)
    tapegrad eval CHECKPOINT
    tapegrad train names [--model mlp|gpt] [--data first|last|FILE] [--steps N] ...
    tapegrad sample CHECKPOINT [-n 20] [--temperature T] [--top-k K] [--seed S]
    tapegrad launch --nproc N [--hostfile FILE] script.py [args]   (data-parallel ranks)
    tapegrad [--debug] ...      show the traceback of an error instead of one line

Each training task is a module listed in `tapegrad.train.TASKS` (see that package's
docstring for the interface); `train TASK` and `eval` dispatch to it. To add a top-level
command, write `_add_<name>(subparsers)` that sets `func`, calls `_common_flags(p)` on
its parser (so `--debug` works after the command too) and validates its flag values with
`tapegrad.train.flags` types, then call it in `build_parser`.

Errors never show a traceback unless `--debug` is given: a usage error (unknown or
abbreviated flag, absurd value) is one line and exit 2; an error while running (a
corrupt checkpoint, missing data, a loss that became NaN, or any unexpected exception
from tapegrad) is one line `tapegrad: error: ...` and exit 1; Ctrl-C is one line and exit
130. A reader that closes the output pipe early (`tapegrad sample CKPT | head -1`) ends
the command quietly, exit 0. Flag values are checked by the validators in `tapegrad/train/flags.py`.
"""
import argparse
import importlib
import os
import sys

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is ONE line: `tapegrad train mnist: error: ...`, and
    no abbreviated flags (`--epoch 2` must not silently mean `--epochs 2`)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("allow_abbrev", False)
        super().__init__(*args, **kwargs)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _common_flags(p):
    """Flags every (sub)command takes; call it on each parser a command adds. SUPPRESS
    keeps a subcommand from resetting a `--debug` given before it."""
    p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                   help="on an error, show the Python traceback instead of one line")
    return p


def _task(name):
    from .train import TASKS
    return importlib.import_module(TASKS[name])


def _add_train(sub):
    from .train import TASKS
    p = sub.add_parser("train", help="train a model (tapegrad train TASK --help)",
                       description="Train a model with tapegrad's autograd.")
    _common_flags(p)
    tasks = p.add_subparsers(dest="task", metavar="TASK", parser_class=_Parser)
    tasks.required = True
    for name in TASKS:
        mod = _task(name)
        tp = tasks.add_parser(name, help=mod.HELP, description=(mod.__doc__ or "").strip(),
                              formatter_class=argparse.RawDescriptionHelpFormatter)
        mod.add_arguments(tp)
        _common_flags(tp)
        tp.set_defaults(func=lambda args, mod=mod: mod.train(args))


def _add_eval(sub):
    from .train import flags
    p = sub.add_parser("eval", help="report the test accuracy of a training checkpoint",
                       description="Reload a checkpoint written by `tapegrad train` and "
                                   "report its test accuracy.")
    p.add_argument("checkpoint", metavar="CHECKPOINT",
                   help="checkpoint.safetensors written by `tapegrad train` (in its --out directory)")
    p.add_argument("--data", default=None, choices=["auto", "mnist", "sample"],
                   help="evaluation data (default: the source the model was trained on)")
    p.add_argument("--data-dir", default=None, metavar="DIR",
                   help="dataset cache directory (default: $TAPEGRAD_DATA or "
                        "~/.cache/tapegrad)")
    p.add_argument("--batch-size", type=flags.integer(1, 2 ** 31 - 1), default=1000,
                   metavar="B", help="evaluation batch size (default: 1000)")
    p.add_argument("--threads", type=flags.integer(0, 4096), default=1, metavar="T",
                   help="BLAS threads (default: 1; 0 = the library default)")
    _common_flags(p)
    p.set_defaults(func=_eval)


def _eval(args):
    from .train import TASKS, common
    ck = common.load_checkpoint(args.checkpoint)
    if ck["task"] not in TASKS:
        raise common.CLIError(f"{args.checkpoint} is a checkpoint of task {ck['task']!r}, "
                              "which this tapegrad does not know")
    return _task(ck["task"]).evaluate(ck, args)


def _add_sample(sub):
    from .train import flags, names
    p = sub.add_parser("sample", help="generate names from a `tapegrad train names` checkpoint",
                       description="Print names generated by a character-level model.")
    p.add_argument("checkpoint", metavar="CHECKPOINT",
                   help="checkpoint.safetensors written by `tapegrad train names`")
    p.add_argument("-n", type=flags.integer(0, names.MAX_SAMPLES), default=20, metavar="N",
                   help="how many (default: 20)")
    p.add_argument("--seed", type=flags.seed, default=0,
                   help="sampling seed, as torch.manual_seed takes it (default: 0)")
    p.add_argument("--temperature", type=flags.real(0, lo_open=True), default=1.0,
                   help="divide the logits by this, a finite number > 0 (default: 1.0)")
    p.add_argument("--top-k", type=flags.integer(1), default=None, metavar="K",
                   help="sample only among the K most likely characters (K >= 1; more "
                        "than the 27 symbols means all)")
    _common_flags(p)
    p.set_defaults(func=_sample)


def _sample(args):
    from .train import common, names
    ck = common.load_checkpoint(args.checkpoint)
    if ck["task"] != names.NAME:
        raise common.CLIError(f"{args.checkpoint} is a checkpoint of task {ck['task']!r}; "
                              "`tapegrad sample` needs one of `tapegrad train names`")
    return names.sample_command(ck, args.n, args.seed, args.temperature, args.top_k,
                                path=args.checkpoint)


def _add_launch(sub):
    p = sub.add_parser("launch", help="run a script on N data-parallel ranks under MPI "
                                      "(like torchrun)",
                       description="Run SCRIPT on N processes under MPI's mpiexec, with "
                                   "RANK, WORLD_SIZE, LOCAL_RANK set as torchrun sets them. "
                                   "See tapegrad.distributed.launch.")
    p.add_argument("--nproc", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=int,
                   default=1, metavar="N", help="number of ranks (default: 1)")
    p.add_argument("--hostfile", default=None, metavar="FILE",
                   help="MPI host file for several machines (mpiexec -f FILE)")
    p.add_argument("-m", dest="module", action="store_true",
                   help="SCRIPT is a module name, run as python -m does")
    p.add_argument("script", metavar="SCRIPT", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, metavar="...",
                   help="arguments passed to the script")
    p.set_defaults(func=_launch)


def _launch(args):
    from .distributed.launch import LaunchError, launch
    from .train.common import CLIError
    if args.nproc < 1:
        raise CLIError(f"--nproc must be >= 1, got {args.nproc}")
    if not args.module and not __import__("os").path.isfile(args.script):
        raise CLIError(f"script {args.script} does not exist")
    try:
        return launch(args.nproc, [args.script] + args.script_args, hostfile=args.hostfile,
                      module=args.module)
    except LaunchError as e:
        raise CLIError(str(e)) from None


_LAUNCH_VALUED = ("--nproc", "--nproc-per-node", "--nproc_per_node", "--hostfile")


def _split_launch(argv):
    """(launch's own argv up to and including SCRIPT, the script's arguments). argparse
    would also read the script's flags (`--n 5` as an abbreviation of --nproc), so
    everything after SCRIPT is set aside before parsing, as torchrun does."""
    i = 1
    while i < len(argv):
        a = argv[i]
        if a in _LAUNCH_VALUED:
            i += 2
        elif a.startswith("-"):
            i += 1                                  # -m, --help, --nproc=2, ...
        else:
            return argv[:i + 1], argv[i + 1:]
    return argv, []


def build_parser():
    from . import __version__
    parser = _Parser(prog="tapegrad",
                     description="tapegrad: reverse-mode autodiff on NumPy with a "
                                 "PyTorch-shaped API. Train and evaluate models from the "
                                 "command line.")
    parser.add_argument("--version", action="version", version=f"tapegrad {__version__}")
    parser.add_argument("--debug", action="store_true", default=False,
                        help="on an error, show the Python traceback instead of one line")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    _add_train(sub)
    _add_eval(sub)
    _add_sample(sub)
    _add_launch(sub)
    return parser


def _one_line(text):
    """Collapse a message to one line (some exceptions carry several)."""
    return " ".join(str(text).split()) or "(no message)"


def _fail(message, code):
    print(f"tapegrad: error: {_one_line(message)}", file=sys.stderr, flush=True)
    return code


def main(argv=None):
    """Entry point of the console script; returns the exit code (usage errors and --help
    exit through argparse's SystemExit: 2 and 0)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv  # until parsing says otherwise (errors while building it)
    rest = None
    if argv[:1] == ["launch"]:  # the script's own flags are not tapegrad's
        argv, rest = _split_launch(argv)
    try:
        args = build_parser().parse_args(argv)
        if rest is not None:
            args.script_args = rest
        args._argv = argv  # `train TASK --nproc N` re-runs the command on N ranks
        debug = bool(getattr(args, "debug", False))
        if debug:
            code = int(args.func(args) or 0)
        else:
            # NumPy's overflow/invalid warnings would add lines to the one-line contract;
            # the jobs check the loss for NaN/inf themselves and say so (--debug shows them).
            import numpy as np
            with np.errstate(over="ignore", invalid="ignore", divide="ignore",
                             under="ignore"):
                code = int(args.func(args) or 0)
        sys.stdout.flush()  # a closed pipe is seen here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        # The reader closed the pipe (`tapegrad sample CKPT | head -1`): it has what it
        # wanted, so end quietly and successfully. stdout now points to /dev/null so that
        # the interpreter's final flush of the unwritten rest cannot raise again.
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass
        return 0
    except KeyboardInterrupt as e:
        if debug:
            raise
        # a trainer adds how to continue the run (its last checkpoint and --resume)
        return _fail("interrupted" + (f"; {e}" if str(e) else ""), 130)
    except Exception as e:  # noqa: BLE001 - the point: no traceback without --debug
        if debug:
            raise
        from .train.common import CLIError
        if isinstance(e, CLIError):
            return _fail(e, 1)
        return _fail(f"{type(e).__name__}: {e} (run with --debug for the traceback)", 1)


if __name__ == "__main__":
    sys.exit(main())
