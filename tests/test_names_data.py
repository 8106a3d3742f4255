"""Names data: cleaning, the 27-symbol vocabulary, deterministic split, windows."""
import numpy as np
import pytest

from tapegrad.data.names import VOCAB, Names, build_windows, clean, decode, encode


def test_vocab_and_roundtrip():
    assert len(VOCAB) == 27 and VOCAB[0] == "."
    assert decode(encode("emma")) == "emma"


def test_windows_of_emma():
    X, Y = build_windows(["emma"], 3)
    assert [decode(x) for x in X] == ["...", "..e", ".em", "emm", "mma"]
    assert decode(Y) == "emma."


def test_clean_lowercases_dedups_letters_only():
    assert clean(["Anna", "anna", "Jo-Ann", "  Bob ", "", "zoë"]) == ["anna", "bob"]


def test_package_lists_sizes_and_split():
    first = Names("first")
    assert 5000 <= len(first.words) <= 5300
    last = Names("last")
    assert 85000 <= len(last.words) <= 90000
    sizes = {k: len(v) for k, v in first.splits.items()}
    assert sizes["train"] == int(0.8 * len(first.words))
    assert sum(sizes.values()) == len(first.words)
    assert Names("first").splits == first.splits  # deterministic
    assert set(first.splits["train"]).isdisjoint(first.splits["val"])


def test_text_file_source(tmp_path):
    p = tmp_path / "words.txt"
    p.write_text("Alpha\nbeta\n\ngamma\nbeta\ndelta\n")
    n = Names(str(p))
    assert sorted(n.words) == ["alpha", "beta", "delta", "gamma"]
    X, Y = n.dataset("train", block_size=4)
    assert X.shape[1] == 4 and X.dtype == np.int64 and Y.shape[0] == X.shape[0]


def test_unreadable_file_is_a_clear_error(tmp_path):
    with pytest.raises(RuntimeError, match="cannot read the word list"):
        Names(str(tmp_path / "missing.txt"))
