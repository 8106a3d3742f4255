"""Test configuration: PyTorch is the oracle and must be importable (never skipped)."""
import os

# Tests run as 2 xdist workers on 2 cores: one BLAS thread each. Multithreaded OpenBLAS
# on an oversubscribed machine stalls for tens of milliseconds per small matmul.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import numpy as np
import pytest

try:
    import torch  # noqa: F401
except ImportError as e:  # pragma: no cover
    raise RuntimeError("the tests compare against PyTorch: pip install -e '.[test]' "
                       "(torch==2.13.0 CPU)") from e

torch.set_num_threads(1)
try:  # numpy may have been imported (and its BLAS started) before this file ran
    from threadpoolctl import threadpool_limits
    threadpool_limits(1)
except ImportError:  # pragma: no cover
    pass


@pytest.fixture(autouse=True)
def _seed():
    import tapegrad as tg
    tg.manual_seed(0)
    np.random.seed(0)
    yield
