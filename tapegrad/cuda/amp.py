"""`tg.cuda.amp`: torch.cuda.amp's GradScaler name (nanoGPT builds
`torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))`); it is `tg.amp.GradScaler`."""
from ..amp import GradScaler  # noqa: F401
