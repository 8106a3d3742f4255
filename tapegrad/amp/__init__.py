"""`tg.amp`: loss scaling for float16 training (`GradScaler`, PyTorch's semantics), and
`autocast` (autocast_mode.py: torch's API and state; ops inside it run in full
precision, as NumPy has no bfloat16).

Mixed precision that really computes in float16 is written out. Keep float32 master weights,
compute in float16 through a differentiable cast (`w.half()`), scale the loss so the
float16 gradients do not flush to zero, and let the scaler unscale the float32
gradients and skip steps whose gradients overflowed:

    scaler = tg.amp.GradScaler()
    loss = loss_fn(model16(x.half()).float(), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)          # unscale_, then optimizer.step() unless inf/nan
    scaler.update()                 # shrink the scale after an overflow, grow it later
"""
from .autocast_mode import autocast, custom_bwd, custom_fwd, is_autocast_available
from .grad_scaler import GradScaler, OptState

__all__ = ["GradScaler", "OptState", "autocast", "custom_bwd", "custom_fwd",
           "is_autocast_available"]
