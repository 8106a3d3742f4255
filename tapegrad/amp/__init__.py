"""`tg.amp`: loss scaling for float16 training (`GradScaler`, PyTorch's semantics).

tapegrad has no autocast: mixed precision is written out. Keep float32 master weights,
compute in float16 through a differentiable cast (`w.half()`), scale the loss so the
float16 gradients do not flush to zero, and let the scaler unscale the float32
gradients and skip steps whose gradients overflowed:

    scaler = tg.amp.GradScaler()
    loss = loss_fn(model16(x.half()).float(), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)          # unscale_, then optimizer.step() unless inf/nan
    scaler.update()                 # shrink the scale after an overflow, grow it later
"""
from .grad_scaler import GradScaler, OptState

__all__ = ["GradScaler", "OptState"]
