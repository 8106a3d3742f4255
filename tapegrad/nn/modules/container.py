"""torch.nn.modules.container: Sequential, ModuleList, ModuleDict, ParameterList,
ParameterDict (re-exported from tapegrad.nn)."""
from ..containers import ModuleDict, ModuleList, Sequential
from ..parameter_containers import ParameterDict, ParameterList

__all__ = ["ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential"]
