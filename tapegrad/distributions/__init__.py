"""`tg.distributions`: torch.distributions' import path. Only `Categorical` is here (the
policy distribution of pytorch/examples' reinforcement_learning: sample an action,
`log_prob` it, sum into the REINFORCE loss); other distributions are not implemented."""
from .categorical import Categorical

__all__ = ["Categorical"]
