"""`tg.nn.utils.stateless` (torch.nn.utils.stateless): `functional_call`, the same function
as `tg.func.functional_call` (implemented in tapegrad/_func/stateless.py)."""
from ..._func.stateless import functional_call

__all__ = ["functional_call"]
