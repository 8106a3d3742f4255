"""Issue 14, "The command line": every subcommand gets a table of absurd values for every
flag; each must give ONE line on stderr (`tapegrad...: error: ...`, naming the flag or
the file) and a non-zero exit, never a traceback, a NaN run or a MemoryError.

Each case starts from a valid command line (tiny sizes, the offline sample, files in a
temporary directory) and appends the absurd flag, so only that flag is wrong (argparse
takes the last value given). `{file}`, `{dir}`, ... are filled in from the fixture.
"""
import os

import pytest
import torch  # noqa: F401  (the suite's oracle; a missing torch fails loudly)

from _cli_fixtures import (assert_one_line_error, run, run_subprocess, train_mnist,
                           train_names, words_file)


@pytest.fixture(scope="module")
def paths(tmp_path_factory):
    root = tmp_path_factory.mktemp("cli_flags")
    p = {"root": str(root), "words": words_file(str(root))}
    p["mnist_ck"] = train_mnist(str(root / "mnist"))
    p["names_ck"] = train_names(str(root / "names"), p["words"])
    p["file"] = str(root / "a_file.txt")
    with open(p["file"], "w") as fh:
        fh.write("not a checkpoint\n")
    p["empty"] = str(root / "empty.txt")
    open(p["empty"], "w").close()
    p["binary"] = str(root / "binary.txt")
    with open(p["binary"], "wb") as fh:
        fh.write(bytes(range(256)) * 4)
    p["dir"] = str(root / "a_dir")
    os.makedirs(p["dir"])
    p["missing"] = str(root / "missing.npz")
    p["under_file"] = os.path.join(p["file"], "sub")
    return p


BASE = {
    "mnist": ["train", "mnist", "--data", "sample", "--epochs", "1", "--hidden", "8",
              "--batch-size", "500", "--no-progress", "--out", "{root}/out_mnist"],
    "names": ["train", "names", "--data", "{words}", "--steps", "2", "--samples", "0",
              "--out", "{root}/out_names"],
    "eval": ["eval", "{mnist_ck}", "--data", "sample"],
    "sample": ["sample", "{names_ck}", "-n", "2"],
}

NUMBERS = ["abc", "", "1.5", "1e3", "0x10", "nan"]          # not integers at all
REALS = ["abc", "", "nan", "inf", "-inf", "1e400", "0x1p3"]  # not finite numbers
SEEDS = [str(-2 ** 63 - 1), str(2 ** 64), "1.5", "abc", "1e3", ""]

# (command, flag, absurd values, needle: what the message must name; None = the flag)
TABLE = [
    ("mnist", "--model", ["bogus", "", "MLP"], None),
    ("mnist", "--hidden", ["0", "-1", "abc", "256,,128", "1e3", "", ",", "8,-8",
                           "100000000000", ",".join(["8"] * 101)], None),
    ("mnist", "--hidden", ["1000000000", "100000,100000,100000"], "--hidden"),  # memory
    ("mnist", "--epochs", NUMBERS + ["0", "-1", "10000001"], None),
    ("mnist", "--batch-size", NUMBERS + ["0", "-1", str(2 ** 31)], None),
    ("mnist", "--lr", REALS + ["0", "-1", "-0.0"], None),
    ("mnist", "--optimizer", ["lbfgs", "", "ADAM"], None),
    ("mnist", "--schedule", ["cosine", "", "OneCycle"], None),
    ("mnist", "--weight-decay", REALS + ["-1", "-1e-300"], None),
    ("mnist", "--seed", SEEDS, None),
    ("mnist", "--data", ["bogus", "", "MNIST"], None),
    ("mnist", "--threads", NUMBERS + ["-1", "5000"], None),
    ("mnist", "--nproc", NUMBERS + ["0", "-1", "100000"], None),
    ("mnist", "--no-progress=yes", [None], "--no-progress"),
    ("mnist", "--monitor=1", [None], "--monitor"),
    ("mnist", "--resume", ["{missing}", "{dir}", "{file}", "{empty}", "{binary}",
                           "{names_ck}", "{mnist_ck}"], "{value}"),  # mnist_ck: 1 epoch done
    ("mnist", "--force=1", [None], "--force"),
    ("mnist", "--epoch", ["2"], None),        # abbreviations are refused
    ("mnist", "--hid", ["32"], None),
    ("mnist", "--bogus", [None, "1"], None),
    ("names", "--model", ["bogus", "", "GPT"], None),
    ("names", "--data", ["{missing}", "{dir}", "{empty}", "{binary}", "{file}", ""], "{value}"),
    ("names", "--steps", NUMBERS + ["0", "-1", "1000000001"], None),
    ("names", "--threads", NUMBERS + ["-1", "5000"], None),
    ("names", "--batch-size", NUMBERS + ["0", "-1", str(2 ** 31)], None),
    ("names", "--lr", REALS + ["0", "-1"], None),
    ("names", "--block-size", NUMBERS + ["0", "-1", "1000001"], None),
    ("names", "--n-layer", NUMBERS + ["0", "-1", "10001"], None),
    ("names", "--n-embd", NUMBERS + ["0", "-1", str(2 ** 20 + 1)], None),
    ("names", "--n-head", NUMBERS + ["0", "-1", str(2 ** 20 + 1)], None),
    ("names", "--eval-every", NUMBERS + ["0", "-1"], None),
    ("names", "--seed", SEEDS, None),
    ("names", "--nproc", NUMBERS + ["0", "-1", "100000"], None),
    ("names", "--samples", NUMBERS + ["-1", "1000001"], None),
    ("names", "--force=1", [None], "--force"),
    ("names", "--no-progress=1", [None], "--no-progress"),
    ("names", "--resume", ["{missing}", "{dir}", "{file}", "{empty}", "{binary}",
                           "{mnist_ck}"], "{value}"),
    ("names", "--step", ["5"], None),
    ("eval", "CHECKPOINT", ["{missing}", "{dir}", "{file}", "{empty}", "{binary}",
                            "{names_ck}/x"], "{value}"),
    ("eval", "--data", ["bogus", ""], None),
    ("eval", "--batch-size", NUMBERS + ["0", "-1", str(2 ** 31)], None),
    ("eval", "--threads", NUMBERS + ["-1", "5000"], None),
    ("eval", "--batch", ["10"], None),
    ("sample", "CHECKPOINT", ["{missing}", "{dir}", "{file}", "{empty}", "{mnist_ck}"],
     "{value}"),
    ("sample", "-n", NUMBERS + ["-1", "1000001"], None),
    ("sample", "--seed", SEEDS, None),
    ("sample", "--temperature", REALS + ["0", "-1", "-0.0"], None),
    ("sample", "--top-k", NUMBERS + ["0", "-5"], None),
    ("sample", "--temp", ["0.5"], None),
    ("top", "--vers", [None], None),
    ("top", "--debug=1", [None], "--debug"),
    ("top", "fly", [None], "fly"),
]

# Flags whose absurd values are only absurd together with another flag.
COMBOS = [
    ("names", ["--model", "gpt", "--n-head", "3"], "--n-head"),        # 3 does not divide 64
    ("names", ["--model", "gpt", "--n-embd", "10", "--n-head", "4"], "--n-head"),
    ("names", ["--model", "gpt", "--n-embd", str(2 ** 20)], "--n-embd"),  # 10^13 params
    ("names", ["--block-size", "1000000", "--batch-size", "100000000"], "--block-size"),
    ("mnist", ["--data", "auto", "--data-dir", "{file}"], "{file}"),
    ("mnist", ["--data", "auto", "--data-dir", "{under_file}"], "{file}"),
    ("mnist", ["--out", "{file}"], "{file}"),
    ("mnist", ["--out", "{under_file}"], "{file}"),
    ("names", ["--out", "{file}"], "{file}"),
    ("eval", ["--data", "auto", "--data-dir", "{file}"], "{file}"),
]


def _cases():
    for cmd, flag, values, needle in TABLE:
        for v in values:
            if flag == "CHECKPOINT":
                yield pytest.param(cmd, None, v, needle, id=f"{cmd} CHECKPOINT={v}")
            else:
                yield pytest.param(cmd, flag, v, needle, id=f"{cmd} {flag} {v!r}")


def _fill(items, paths, value=None):
    fill = dict(paths, value=value)
    return [str(a).format(**fill) if a is not None else None for a in items]


@pytest.mark.parametrize("cmd,flag,value,needle", list(_cases()))
def test_absurd_flag_value_one_line_nonzero(cmd, flag, value, needle, paths, capsys):
    base = _fill(BASE["eval" if cmd == "top" else cmd], paths)
    value = _fill([value], paths)[0]
    if flag is None:                       # the positional CHECKPOINT
        argv = [base[0], value] + base[2:]
    elif cmd == "top":                     # global flags come before the command
        argv = [flag] + ([value] if value is not None else []) + base
    else:
        argv = base + [flag] + ([value] if value is not None else [])
    capsys.readouterr()
    code = run(argv)
    err = capsys.readouterr().err
    want = _fill([needle or flag.split("=")[0]], paths, value)[0]
    assert_one_line_error(code, err, want, context=argv)


@pytest.mark.parametrize("cmd,extra,needle", COMBOS, ids=[" ".join(c[1]) for c in COMBOS])
def test_absurd_flag_combination_one_line_nonzero(cmd, extra, needle, paths, capsys):
    argv = _fill(BASE[cmd], paths) + _fill(extra, paths)
    capsys.readouterr()
    code = run(argv)
    assert_one_line_error(code, capsys.readouterr().err, _fill([needle], paths)[0],
                          context=argv)


def test_table_covers_every_flag_of_every_subcommand():
    """A flag added later without absurd values in the table fails here."""
    from tapegrad.cli import build_parser
    parser = build_parser()
    sub = {a.dest: a for a in parser._actions}["command"].choices
    leaves = {"eval": sub["eval"], "sample": sub["sample"]}
    train_sub = {a.dest: a for a in sub["train"]._actions}["task"].choices
    leaves.update(train_sub)
    covered = {(cmd, flag.split("=")[0]) for cmd, flag, _, _ in TABLE}
    covered |= {(cmd, x) for cmd, extra, _ in COMBOS for x in extra if x.startswith("-")}
    skip = {"-h", "--help", "--debug"}
    for name, p in leaves.items():
        for action in p._actions:
            opts = [o for o in action.option_strings if o not in skip]
            if action.option_strings and not opts:
                continue
            if not action.option_strings:          # a positional argument
                assert (name, "CHECKPOINT") in covered, f"no absurd values for `{name}`"
            else:
                assert any((name, o) in covered for o in opts), \
                    f"no absurd values for `{name} {opts[0]}`"


@pytest.mark.parametrize("argv,needle", [
    (["train", "mnist", "--lr", "inf"], "--lr"),
    (["train", "mnist", "--hidden", "100000000000"], "--hidden"),
    (["train", "mnist", "--hidden", "1000000000", "--data", "sample"], "--hidden"),
    (["train", "names", "--model", "gpt", "--n-head", "3"], "--n-head"),
    (["sample", "missing.npz", "--temperature", "nan"], "--temperature"),
    (["eval", "missing.npz", "--batch-size", "0"], "--batch-size"),
])
def test_real_exit_code_and_stderr_in_a_subprocess(argv, needle, tmp_path):
    r = run_subprocess(*argv, cwd=tmp_path)
    assert_one_line_error(r.returncode, r.stderr, needle, context=argv)
    assert not (tmp_path / "runs").exists()   # refused before creating anything
