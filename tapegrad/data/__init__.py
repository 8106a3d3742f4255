"""`tg.data`: ready-made datasets (MNIST and its offline sample)."""
from .mnist import MNIST, MNISTDownloadError, MNISTError, load_mnist_sample

__all__ = ["MNIST", "MNISTError", "MNISTDownloadError", "load_mnist_sample"]
