"""`tg.optim.lr_scheduler`: learning-rate schedulers with PyTorch's names, arguments,
numbers and state dicts.

Per-epoch factors (`_lr_basic`): LambdaLR, MultiplicativeLR, StepLR, MultiStepLR,
ConstantLR, LinearLR, ExponentialLR, PolynomialLR, CosineAnnealingLR.
Cyclical (`_lr_cyclic`): CosineAnnealingWarmRestarts, OneCycleLR, CyclicLR.
Metric-driven (`_lr_plateau`): ReduceLROnPlateau.  Composites (`_lr_composite`):
SequentialLR, ChainedScheduler.  Base class (`_scheduler`): LRScheduler.

This module only gathers the public names, so `dir()` shows schedulers, not helpers.
"""
from ._lr_basic import (ConstantLR, CosineAnnealingLR, ExponentialLR, LambdaLR, LinearLR,
                        MultiplicativeLR, MultiStepLR, PolynomialLR, StepLR)
from ._lr_composite import ChainedScheduler, SequentialLR
from ._lr_cyclic import CosineAnnealingWarmRestarts, CyclicLR, OneCycleLR
from ._lr_plateau import ReduceLROnPlateau
from ._scheduler import LRScheduler, _LRScheduler

__all__ = ["LambdaLR", "MultiplicativeLR", "StepLR", "MultiStepLR", "ConstantLR", "LinearLR",
           "ExponentialLR", "SequentialLR", "CosineAnnealingLR", "ChainedScheduler",
           "ReduceLROnPlateau", "CyclicLR", "CosineAnnealingWarmRestarts", "OneCycleLR",
           "PolynomialLR", "LRScheduler"]
