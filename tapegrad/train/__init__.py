"""Training jobs behind the command line (`tapegrad train TASK ...`).

One module per task (`mnist.py`, ...). A task module provides:

    NAME, HELP                       the sub-command and its one-line description
    add_arguments(parser)            its flags (argparse)
    train(args) -> int               run training; returns the exit code
    evaluate(checkpoint, args) -> int   `tapegrad eval` on a checkpoint of this task

and registers itself in `TASKS` below; `tapegrad/cli.py` builds the parser from it.
Shared pieces (progress bar, metrics.json, curves PNG, checkpoints, CLI errors) live in
`common.py`.
"""
TASKS = {
    "mnist": "tapegrad.train.mnist",
    "names": "tapegrad.train.names",
}
