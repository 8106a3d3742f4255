"""`Categorical(probs=None, logits=None, validate_args=None)`: torch.distributions'
distribution over {0, ..., K-1}, batched over the leading dims of its parameter.

As in torch, `probs` are normalized to sum to 1 over the last dim and `logits` are
normalized log-probabilities (`logits - logits.logsumexp(-1)`); whichever was not given
is computed on first use and then kept (so the repr, which lists the parameters held,
changes as torch's does). Everything is built from differentiable tensor ops, so
`log_prob(a)` and `entropy()` carry gradients back to the network that made the
parameters; `sample()` does not (torch's Categorical has no rsample).
"""
import numpy as np

from ..core.grad_mode import no_grad
from ..ops.creation import arange
from ..nn.functional import softmax
from ..ops.shape import broadcast_tensors
from ..ops.random import multinomial
from .._tensor import Size, Tensor


class Categorical:
    has_rsample = False
    has_enumerate_support = True
    _PARAMS = ("probs", "logits")  # torch's arg_constraints order, for the repr

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        param = self.probs if probs is not None else self.logits
        self._param = param
        self._num_events = param.size()[-1]
        self.batch_shape = Size(param.size()[:-1])
        self.event_shape = Size(())
        # torch validates by default (validate_args=None means "yes, unless disabled")
        self._validate_args = validate_args is not False
        if self._validate_args:
            self._check_param("probs" if probs is not None else "logits")

    def __getattr__(self, name):  # the parameter not given, computed once (torch's lazy_property)
        if not {"probs", "logits"} & self.__dict__.keys():  # not initialized: no recursion
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        if name == "logits":
            eps = np.finfo(self.probs.detach().numpy().dtype).eps
            value = self.probs.clamp(min=eps, max=1 - eps).log()
        elif name == "probs":
            value = softmax(self.logits, dim=-1)
        else:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")
        self.__dict__[name] = value
        return value

    def __repr__(self):
        shown = ", ".join(f"{p}: {self.__dict__[p].size()}" for p in self._PARAMS
                          if p in self.__dict__)
        return f"{type(self).__name__}({shown})"

    def _check_param(self, name):
        value = self.__dict__[name]
        a = value.detach().numpy()
        if name == "probs":
            ok = bool((a >= 0).all() and (np.abs(a.sum(-1) - 1) < 1e-6).all())
            constraint = "Simplex()"
        else:
            ok = not np.isnan(a).any()
            constraint = "IndependentConstraint(Real(), 1)"
        if not ok:
            raise ValueError(f"Expected parameter {name} (Tensor of shape {tuple(value.shape)}) "
                             f"of distribution {self!r} to satisfy the constraint "
                             f"{constraint}, but found invalid values:\n{value}")

    @property
    def param_shape(self):
        return self._param.size()

    @property
    def support(self):
        return f"IntegerInterval(lower_bound=0, upper_bound={self._num_events - 1})"

    @property
    def mean(self):
        return self.probs.new_full(tuple(self.batch_shape), float("nan"))

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return self.probs.new_full(tuple(self.batch_shape), float("nan"))

    def _extended_shape(self, sample_shape=()):
        return Size(tuple(sample_shape) + tuple(self.batch_shape) + tuple(self.event_shape))

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        with no_grad():
            probs_2d = self.probs.reshape(-1, self._num_events)
            n = int(np.prod(sample_shape, dtype=np.int64))
            samples_2d = multinomial(probs_2d, n, True).T
            return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._check_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def _check_sample(self, value):
        if not isinstance(value, Tensor):
            raise ValueError("The value argument to log_prob must be a Tensor")
        a = value.detach().numpy()
        if not ((a >= 0) & (a <= self._num_events - 1) & (a == np.floor(a))).all():
            raise ValueError(f"Expected value argument (Tensor of shape {tuple(value.shape)}) "
                             f"to be within the support ({self.support}) of the distribution "
                             f"{self!r}, but found invalid values:\n{value}")

    def entropy(self):
        min_real = float(np.finfo(self.logits.detach().numpy().dtype).min)
        logits = self.logits.clamp(min=min_real)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events).view((-1,) + (1,) * len(self.batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self.batch_shape))
        return values
