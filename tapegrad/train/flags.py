"""argparse `type=` validators for the command line's flags.

Each factory returns a function that turns the flag's text into a value or raises
`argparse.ArgumentTypeError`, which argparse prints as ONE line naming the flag
(`argument --lr: must be a finite number > 0, got 'nan'`). Checking here, before any
data is loaded or any array allocated, is what keeps absurd values from turning into
tracebacks, NaN training runs or MemoryErrors later.
"""
import argparse
import math

__all__ = ["integer", "real", "seed", "normalize_seed", "sizes", "SEED_MIN", "SEED_MAX"]

# torch.manual_seed accepts [-2**63, 2**64 - 1] and maps a negative seed s to s + 2**64.
SEED_MIN, SEED_MAX = -(2 ** 63), 2 ** 64 - 1


def _bounds_text(lo, hi, lo_open=False):
    if lo is not None and hi is not None:
        return f"between {lo} and {hi}" if not lo_open else f"> {lo} and <= {hi}"
    if lo is not None:
        return f"> {lo}" if lo_open else f">= {lo}"
    return f"<= {hi}"


def integer(lo=None, hi=None):
    """An int in [lo, hi] (either bound may be None). '1.5', '1e3', 'inf' are refused."""
    def parse(text):
        try:
            v = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected an integer, got {text!r}") from None
        if (lo is not None and v < lo) or (hi is not None and v > hi):
            raise argparse.ArgumentTypeError(
                f"must be an integer {_bounds_text(lo, hi)}, got {text}")
        return v
    parse.__name__ = "int"
    return parse


def real(lo=None, hi=None, lo_open=False):
    """A finite float in [lo, hi] (or (lo, hi] with lo_open). 'nan', 'inf' and '1e400'
    (which Python reads as inf) are refused: no training run is meaningful with them."""
    def parse(text):
        try:
            v = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a float, got {text!r}") from None
        bad = not math.isfinite(v)
        bad = bad or (lo is not None and (v <= lo if lo_open else v < lo))
        bad = bad or (hi is not None and v > hi)
        if bad:
            what = _bounds_text(lo, hi, lo_open) if lo is not None or hi is not None else ""
            raise argparse.ArgumentTypeError(
                f"must be a finite number {what}".rstrip() + f", got {text!r}")
        return v
    parse.__name__ = "float"
    return parse


def seed(text):
    """A seed as torch.manual_seed accepts it: an int in [-2**63, 2**64 - 1]."""
    return integer(SEED_MIN, SEED_MAX)(text)


def normalize_seed(s):
    """torch's mapping of a negative seed: s -> s + 2**64 (the generators need >= 0)."""
    return int(s) % (2 ** 64)


def sizes(max_count=100, max_size=2 ** 31 - 1):
    """Comma-separated positive layer sizes ('256,128') -> [256, 128]."""
    def parse(text):
        parts = [p.strip() for p in str(text).split(",")]
        if not parts or any(p == "" for p in parts):
            raise argparse.ArgumentTypeError(
                f"expected comma-separated positive integers like 256,128, got {text!r}")
        out = []
        for p in parts:
            try:
                v = int(p)
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"expected comma-separated positive integers, got {text!r}") from None
            if not 1 <= v <= max_size:
                raise argparse.ArgumentTypeError(
                    f"layer sizes must be between 1 and {max_size}, got {text!r}")
            out.append(v)
        if len(out) > max_count:
            raise argparse.ArgumentTypeError(
                f"at most {max_count} hidden layers, got {len(out)}")
        return out
    parse.__name__ = "sizes"
    return parse
