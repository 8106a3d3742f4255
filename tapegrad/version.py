"""`tg.version`: torch.version's names. Programs print them at start-up to say what they
run on (`print(f"Running pytorch {torch.version.__version__}")` in llm.c's
train_gpt2.py, `torch.version.cuda` in environment reports).

tapegrad runs on the CPU only, so the accelerator toolkits are None, as in torch's CPU
builds. `tg.__version__` is this module's `__version__` (one place to bump it, besides
pyproject.toml).
"""
__version__ = "0.1.0"
git_version = "Unknown"  # torch's value in a build made outside a git checkout
debug = False
cuda = None
hip = None
rocm = None
xpu = None

__all__ = ["__version__", "cuda", "debug", "git_version", "hip", "rocm", "xpu"]
