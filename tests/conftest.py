"""Test configuration: PyTorch is the oracle and must be importable (never skipped)."""
import os

import numpy as np
import pytest

try:
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    raise RuntimeError("the tests compare against PyTorch: pip install -e '.[test]' "
                       "(torch==2.13.0 CPU)") from e

torch.set_num_threads(1)


@pytest.fixture(autouse=True)
def _seed():
    import tapegrad as tg
    tg.manual_seed(0)
    np.random.seed(0)
    yield
