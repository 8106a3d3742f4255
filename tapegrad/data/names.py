"""Names: the character-level data set for the makemore-style models.

Words come from the name lists the `names` package ships (US census first names,
about 5,000 unique, and surnames, about 88,000), or from any text file with one word
per line. Words are lowercased, de-duplicated and kept only if they are letters a-z.
The vocabulary has 27 symbols: `.` (index 0) marks both the start and the end of a
word, then a-z. The split into train/val/test is 80/10/10 with a fixed seed.

`Names(...).dataset(split, block_size)` gives the context-window examples: for the
word "emma" and block size 3, the inputs are `...`, `..e`, `.em`, `emm`, `mma` and the
targets `e`, `m`, `m`, `a`, `.`.
"""
import os
import string

import numpy as np

VOCAB = "." + string.ascii_lowercase
STOI = {c: i for i, c in enumerate(VOCAB)}
ITOS = dict(enumerate(VOCAB))
LISTS = {"first": ("dist.female.first", "dist.male.first"), "last": ("dist.all.last",)}


def _package_lists(which):
    try:
        import names as _names_pkg
    except ImportError as e:  # pragma: no cover - depends on the optional extra
        raise RuntimeError("the name lists come from the `names` package: "
                           "pip install 'tapegrad[train]' (or pass a text file)") from e
    folder = os.path.dirname(_names_pkg.__file__)
    words = []
    for fname in LISTS[which]:
        with open(os.path.join(folder, fname), encoding="ascii") as f:
            words += [line.split()[0] for line in f if line.strip()]
    return words


def _read_file(path):
    try:
        with open(path, encoding="utf-8") as f:
            return [w.strip() for w in f]
    except OSError as e:
        raise RuntimeError(f"cannot read the word list {path!r}: {e.strerror}") from None


def clean(words):
    """Lowercase, letters only, first occurrence kept (order preserved)."""
    seen, out = set(), []
    for w in words:
        w = w.strip().lower()
        if w and w.isascii() and w.isalpha() and w not in seen:
            seen.add(w)
            out.append(w)
    return out


def encode(word):
    return [STOI[c] for c in word]


def decode(indices):
    return "".join(ITOS[int(i)] for i in indices)


def build_windows(words, block_size):
    """All (context, next character) pairs: X (n, block_size) int64, Y (n,) int64."""
    xs, ys = [], []
    for w in words:
        context = [0] * block_size
        for ix in encode(w) + [0]:
            xs.append(context)
            ys.append(ix)
            context = context[1:] + [ix]
    X = np.array(xs, dtype=np.int64).reshape(-1, block_size)
    return X, np.array(ys, dtype=np.int64)


class Names:
    """A word list with its deterministic 80/10/10 split.

    `source`: "first" (census first names), "last" (surnames), or a path to a text
    file with one word per line.
    """

    def __init__(self, source="first", seed=42):
        if source in LISTS:
            raw = _package_lists(source)
        else:
            raw = _read_file(source)
        self.source = source
        self.words = clean(raw)
        if len(self.words) < 3:
            raise ValueError(f"{source!r} has {len(self.words)} usable words; need at least 3")
        order = np.random.default_rng(seed).permutation(len(self.words))
        shuffled = [self.words[i] for i in order]
        n1, n2 = int(0.8 * len(shuffled)), int(0.9 * len(shuffled))
        self.splits = {"train": shuffled[:n1], "val": shuffled[n1:n2], "test": shuffled[n2:]}
        self.vocab_size = len(VOCAB)
        self.max_len = max(len(w) for w in self.words)

    def dataset(self, split="train", block_size=3):
        """A TensorDataset-like pair (X, Y) of tapegrad tensors for one split."""
        from .._tensor import Tensor
        X, Y = build_windows(self.splits[split], block_size)
        return Tensor._of(X), Tensor._of(Y)

    def __repr__(self):
        sizes = ", ".join(f"{k}={len(v)}" for k, v in self.splits.items())
        return f"Names({self.source!r}: {len(self.words)} words; {sizes})"
