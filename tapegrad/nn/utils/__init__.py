"""`tg.nn.utils`: helpers for training modules (gradient clipping)."""
from . import clip_grad
from . import rnn
from .clip_grad import clip_grad_norm, clip_grad_norm_, clip_grad_value_, get_total_norm

__all__ = ["clip_grad", "clip_grad_norm_", "clip_grad_norm", "clip_grad_value_",
           "get_total_norm"]
__all__ += ["rnn"]  # tg.nn.utils.rnn: pad / pack sequences for the recurrent layers
from . import stateless  # noqa: E402  tg.nn.utils.stateless.functional_call (torch's path)
__all__ += ["stateless"]
