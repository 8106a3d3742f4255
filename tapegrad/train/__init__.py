"""Training jobs behind the command line (`tapegrad train TASK ...`).

One module per task (`mnist.py`, ...). A task module provides:

    NAME, HELP                       the sub-command and its one-line description
    add_arguments(parser)            its flags (argparse)
    train(args) -> int               run training; returns the exit code
    evaluate(checkpoint, args) -> int   `tapegrad eval` on a checkpoint of this task
    model_from_checkpoint(ck, path) -> Module   the model a loaded checkpoint describes

and registers itself in `TASKS` below; `tapegrad/cli.py` builds the parser from it.
Shared pieces (progress bar, metrics.json, curves PNG, checkpoints, CLI errors) live in
`common.py`.

From Python, `load_model(path)` rebuilds the model of any checkpoint `tapegrad train`
wrote (the class from the stored config, then the weights):

    from tapegrad.train import load_model
    model = load_model("runs/mnist/checkpoint.safetensors")     # in eval mode
"""
import importlib

__all__ = ["TASKS", "load_model"]

TASKS = {
    "mnist": "tapegrad.train.mnist",
    "names": "tapegrad.train.names",
}


def load_model(path):
    """The model of a `tapegrad train` checkpoint, rebuilt from the config stored in it
    (`tg.load(path)["config"]`) with its weights loaded, in eval mode. A missing, damaged
    or foreign file raises `tapegrad.train.common.CLIError` with a one-line message
    naming the file."""
    from .common import CLIError, load_checkpoint
    ck = load_checkpoint(path)
    if ck["task"] not in TASKS:
        raise CLIError(f"{path} is a checkpoint of task {ck['task']!r}, which this "
                       "tapegrad does not know")
    model = importlib.import_module(TASKS[ck["task"]]).model_from_checkpoint(ck, path)
    model.eval()
    return model
