"""`tg.utils.tensorboard`: torch.utils.tensorboard's SummaryWriter for tapegrad tensors.

    from tapegrad.utils.tensorboard import SummaryWriter   # torch.utils.tensorboard's import
    writer = SummaryWriter(log_dir="runs/exp1")
    writer.add_scalar("Loss/train", loss, step)           # loss: a 0-d tensor or a float
    writer.flush()

The event files are written by the `tensorboardX` package (`pip install
"tapegrad[tensorboard]"`); `writer.py` gives its SummaryWriter torch's signatures and
hands it NumPy arrays. Like torch's module, which needs the `tensorboard` package, this
one is not imported by `import tapegrad` and raises ImportError here when its
dependency is missing.
"""
try:
    import tensorboardX  # noqa: F401  (only to fail early, with the install command)
except ImportError as e:
    raise ImportError(
        "tapegrad.utils.tensorboard needs the tensorboardX package: "
        'pip install "tapegrad[tensorboard]" (or pip install tensorboardX)') from e

from .writer import FileWriter, SummaryWriter

# torch also exports tensorboard's RecordWriter (TFRecord framing over a file object);
# tensorboardX's class of that name takes a path instead, so it is not re-exported.
__all__ = ["FileWriter", "SummaryWriter"]
