"""torch.distributed's backend names and launch queries: `Backend` (the names as a
str subclass: Backend("GLOO") == "gloo"), get_default_backend_for_device ("cpu" ->
"gloo"), is_backend_available, get_node_local_rank, is_torchelastic_launched.

Every tapegrad backend runs on MPI: "gloo" and "mpi" are available when mpi4py is; a
GPU backend's name is known (so code that asks gets torch's answer) but never available.
"""
import os

from .process_group import is_available

__all__ = ["Backend", "get_default_backend_for_device", "is_backend_available",
           "get_node_local_rank", "is_torchelastic_launched"]


class Backend(str):
    """A backend name, lower-cased: Backend("GLOO") is "gloo", as torch's."""
    UNDEFINED = "undefined"
    GLOO = "gloo"
    NCCL = "nccl"
    UCC = "ucc"
    MPI = "mpi"
    XCCL = "xccl"
    FAKE = "fake"
    backend_list = [UNDEFINED, GLOO, NCCL, XCCL, UCC, MPI]
    default_device_backend_map = {"cpu": GLOO, "cuda": NCCL, "xpu": XCCL, "mps": GLOO}

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError("Backend constructor parameter must be string-ish")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


def get_default_backend_for_device(device):
    """The backend torch picks for a device type: "gloo" for "cpu"."""
    if device is None or not isinstance(device, str) and not hasattr(device, "type"):
        raise TypeError(f"get_default_backend_for_device: expected a device or a device "
                        f"string, got {type(device).__name__}")
    kind = device.type if hasattr(device, "type") else str(device).split(":")[0]
    backend = Backend.default_device_backend_map.get(kind)
    if backend is None:
        raise ValueError(f"Default backend not registered for device : {device}")
    return backend


def is_backend_available(backend):
    """True for "gloo" and "mpi" (also "cpu:gloo") when mpi4py is installed."""
    names = [part.split(":")[-1] for part in str(backend).lower().split(",")]
    return all(n in (Backend.GLOO, Backend.MPI) for n in names) and is_available()


def get_node_local_rank(fallback_rank=None):
    """This process's rank on its machine: LOCAL_RANK (set by `tapegrad launch`), else
    `fallback_rank`."""
    if "LOCAL_RANK" in os.environ:
        return int(os.environ["LOCAL_RANK"])
    if fallback_rank is not None:
        return int(fallback_rank)
    raise RuntimeError("LOCAL_RANK is not in the environment. Consider passing fallback_rank "
                       "to allow `get_node_local_rank` to work, assuming you are not running "
                       "in a multi-device context and want the code to run locally instead.")


def is_torchelastic_launched():
    """True under `tapegrad launch` (which sets TORCHELASTIC_RUN_ID, as torchrun does)."""
    return os.getenv("TORCHELASTIC_RUN_ID") is not None
