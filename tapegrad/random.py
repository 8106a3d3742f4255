"""Random numbers: a global NumPy PCG64 generator that `manual_seed` resets.

Streams are reproducible within tapegrad; they do not match PyTorch's.
"""
import numpy as np


class Generator:
    """A seedable source of random numbers (NumPy's PCG64 underneath)."""

    def __init__(self, device="cpu"):
        self._seed = None
        self.rng = np.random.Generator(np.random.PCG64())

    def manual_seed(self, seed):
        self._seed = int(seed)
        self.rng = np.random.Generator(np.random.PCG64(self._seed))
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return self.rng.bit_generator.state

    def set_state(self, state):
        self.rng.bit_generator.state = state


default_generator = Generator()


def manual_seed(seed):
    """Seed the global generator (and NumPy's legacy global one, used by nothing here)."""
    default_generator.manual_seed(seed)
    return default_generator


def seed():
    return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return default_generator.get_state()


def set_rng_state(state):
    default_generator.set_state(state)


def rng(generator=None):
    return (generator or default_generator).rng
