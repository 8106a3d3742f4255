"""The doc-test parser (tests/_doc_blocks.py): what passes, what fails, and the markers.

The pages themselves are tested by Sybil through ../conftest.py; this file checks that
the checks can fail: a drifted output, an unmarked block, a stale excerpt.
"""
import os
from pathlib import Path

import pytest
from sybil import Document
from sybil.example import SybilFailure

import _doc_blocks
from _doc_blocks import matches, parse_blocks

FENCE = "```"


def _examples(tmp_path, text):
    page = tmp_path / "page.md"
    page.write_text(text)
    return list(Document.parse(str(page), parse_blocks).examples())


def _outcome(example):
    try:
        example.evaluate()
    except SybilFailure as e:
        return str(e)
    return None


def test_matches_exact_ellipsis_and_numbers():
    assert matches("a\nb\n", "a\nb\n")
    assert not matches("a\nb\n", "a\nc\n")
    assert not matches("a\n", "a\n\n")                       # whitespace counts
    assert matches("start\n...\nend\n", "start\nx\ny\nend\n")  # ... spans lines
    assert matches("epoch 1  |  ~0.6s\n", "epoch 1  |  12.25s\n")
    assert matches("fused ~114 us -> ~1.7x\n", "fused 397 us -> 1.8x\n")
    assert matches("maxdiff: ~5.36e-09\n", "maxdiff: 8.15e-09\n")
    assert not matches("epoch 1  |  ~0.6s\n", "epoch 2  |  0.6s\n")  # only the number is free
    assert not matches("loss ~0.5\n", "loss nan\n")
    assert matches("[1.0] (x+y)*\n", "[1.0] (x+y)*\n")       # regex characters are literal
    assert not matches("[1.0]\n", "11.0]\n")


def test_python_block_and_its_output(tmp_path):
    good, bad, silent, noisy = _examples(tmp_path, (
        f"{FENCE}python\nprint(1 + 1)\n{FENCE}\n{FENCE}text\n2\n{FENCE}\n\n"
        f"{FENCE}python\nprint(1 + 2)\n{FENCE}\n{FENCE}\n4\n{FENCE}\n\n"
        f"{FENCE}python\nx = 1\n{FENCE}\n\n"
        f"{FENCE}python\nprint('not shown')\n{FENCE}\n"))
    assert _outcome(good) is None and _outcome(silent) is None
    msg = _outcome(bad)
    assert "page.md:8 (python block)" in msg and "-4" in msg and "+3" in msg
    assert "+not shown" in _outcome(noisy)     # printing without an output block fails


def test_python_block_errors_propagate(tmp_path):
    (ex,) = _examples(tmp_path, f"{FENCE}python\nundefined_name\n{FENCE}\n")
    with pytest.raises(NameError):
        ex.evaluate()


def test_unmarked_and_marked_blocks(tmp_path):
    examples = _examples(tmp_path, (
        f"{FENCE}sh\npip install something\n{FENCE}\n\n"
        f"<!-- not-run: installs packages -->\n{FENCE}sh\npip install x\n{FENCE}\n\n"
        f"<!-- not-run: -->\n{FENCE}sh\npip install y\n{FENCE}\n\n"
        f"<!-- not-run: slow -->\n{FENCE}python\nprint(1)\n{FENCE}\n{FENCE}text\n1\n{FENCE}\n"))
    unmarked, no_reason = examples                  # the two with a reason make no test
    assert "unmarked code block" in _outcome(unmarked)
    assert "not-run needs a reason" in _outcome(no_reason)


def test_excerpt_must_be_verbatim(tmp_path):
    good, stale, missing = _examples(tmp_path, (
        "<!-- excerpt: tests/_doc_blocks.py -->\n"
        f"{FENCE}python\ndef matches(expected, actual):\n{FENCE}\n\n"
        "<!-- excerpt: tests/_doc_blocks.py -->\n"
        f"{FENCE}python\ndef matches(expected, actual, extra):\n{FENCE}\n\n"
        "<!-- excerpt: tests/no_such_file.py -->\n"
        f"{FENCE}python\nx = 1\n{FENCE}\n"))
    assert _outcome(good) is None
    assert "not (or no longer) a verbatim excerpt" in _outcome(stale)
    assert "names no file" in _outcome(missing)


def test_shell_session(tmp_path):
    good, bad, unknown = _examples(tmp_path, (
        f"{FENCE}text\n$ python -c \"print('hi')\"\nhi\n$ python -c \"import sys; "
        f"print('err', file=sys.stderr)\"\nerr\n{FENCE}\n\n"
        f"{FENCE}text\n$ python -c \"print(41)\"\n42\n{FENCE}\n\n"
        f"{FENCE}text\n$ ls /\nbin\n{FENCE}\n"))
    assert _outcome(good) is None                  # stderr is shown, as in a terminal
    assert "-42" in _outcome(bad) and "+41" in _outcome(bad)
    with pytest.raises(ValueError, match="unknown command 'ls'"):
        unknown.evaluate()


def test_shell_line_continuation(tmp_path):
    """`$ cmd \\` goes on on the next line (once shlex failed: "No escaped character")."""
    good, bad = _examples(tmp_path, (
        f"{FENCE}text\n$ python -c \"import sys; print(sys.argv[1:])\" --a=1 \\\n"
        f"    --b=2 \\\n    --c=3\n['--a=1', '--b=2', '--c=3']\n{FENCE}\n\n"
        f"{FENCE}text\n$ python -c \"import sys; print(sys.argv[1:])\" x \\\n"
        f"    y\n['x']\n{FENCE}\n"))
    assert _outcome(good) is None
    msg = _outcome(bad)
    assert "+['x', 'y']" in msg and "$ python -c" in msg and "x y" in msg


def test_after_session_runs_in_the_sessions_directory(tmp_path, monkeypatch):
    """An `after-session` python block sees the files its page's session wrote, and runs
    that session first when this process has not (another xdist worker ran it)."""
    ran = []

    def fake_command(command, cwd):         # a `tapegrad train` that writes into its cwd
        ran.append(command)
        (Path(cwd) / "made_by_session").write_text(command)
        return ""
    monkeypatch.setattr(_doc_blocks, "_run_command", fake_command)
    before, orphan, session, after, no_reason = _examples(tmp_path, (
        f"{FENCE}python\nimport os\nprint(os.path.exists('made_by_session'))\n{FENCE}\n"
        f"{FENCE}text\nFalse\n{FENCE}\n\n"
        "<!-- after-session: no session above -->\n"
        f"{FENCE}python\nprint(1)\n{FENCE}\n\n"
        f"{FENCE}text\n$ tapegrad train\n{FENCE}\n\n"
        "<!-- after-session: reads the session's file -->\n"
        f"{FENCE}python\nprint(open('made_by_session').read())\n{FENCE}\n"
        f"{FENCE}text\ntapegrad train\n{FENCE}\n\n"
        "<!-- after-session: -->\n"
        f"{FENCE}python\nprint(1)\n{FENCE}\n"))
    cwd = os.getcwd()
    assert _outcome(before) is None                 # other blocks: not in its directory
    assert "no `$` session comes before" in _outcome(orphan)
    assert "with a reason" in _outcome(no_reason)
    assert _outcome(after) is None and ran == ["tapegrad train"]   # ran the session first
    assert os.getcwd() == cwd                       # and came back
    assert _outcome(session) is None and len(ran) == 2
    assert _outcome(after) is None and len(ran) == 2   # the session's directory is reused
    wrong = _examples(tmp_path, (f"{FENCE}text\n$ tapegrad train\n{FENCE}\n\n"
                                 "<!-- after-session: its output is compared -->\n"
                                 f"{FENCE}python\nprint(2)\n{FENCE}\n{FENCE}\n3\n{FENCE}\n"))
    assert "-3" in _outcome(wrong[1]) and "+2" in _outcome(wrong[1])


def test_indented_code_block_fails(tmp_path):
    (indented,) = _examples(tmp_path, (
        "text\n\n    pip install tapegrad\n\n- a list item\n  continued\n\n"
        f"<!-- not-run: an example -->\n{FENCE}text\n\n    inside a fence\n{FENCE}\n"))
    assert "page.md:3: an indented code block" in _outcome(indented)


def test_readme_names_every_flag_of_train_mnist():
    """The README's flag list of `tapegrad train mnist` is complete (it once lacked
    --model, --weight-decay, --no-progress and --monitor)."""
    import argparse
    import os
    from tapegrad.cli import build_parser
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    train = next(a for a in sub.choices["train"]._actions
                 if isinstance(a, argparse._SubParsersAction))
    flags = {opt for action in train.choices["mnist"]._actions
             for opt in action.option_strings if opt.startswith("--")} - {"--help", "--debug"}
    assert {"--model", "--weight-decay", "--no-progress", "--monitor"} <= flags
    readme = open(os.path.join(os.path.dirname(__file__), "..", "README.md")).read()
    assert not [f for f in sorted(flags) if f"`{f}" not in readme]
