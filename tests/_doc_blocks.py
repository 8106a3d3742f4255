"""Sybil parser for the code blocks of README.md and docs/**/*.md (wired in ../conftest.py).

Every fenced block of a page is one of these, and each becomes one test (independent of
the others, so `pytest -n 2` may run them on different workers):

- ```python: the code runs in a fresh namespace (seeds 0). What it prints must equal the
  output block that follows it immediately (```text or a bare fence without `$`); a
  python block with no output block must print nothing.
- a block whose first line starts with `$ `: a shell session. Each `$ command` runs and
  its output (stdout and stderr, as a terminal shows them) must equal the lines below it
  up to the next `$`. `python ...` runs in the repository root with this checkout's
  tapegrad; `tapegrad ...` runs in a fresh temporary directory shared by the block's
  commands (so `runs/...` never lands in the repository), offline (downloads fail at once,
  so the run is the same with or without network), with progress bars off. A command
  line ending in `\\` goes on on the next line, as in a shell.
- `<!-- excerpt: PATH -->` before a block: the block must appear verbatim (up to its
  indentation) in the file PATH (a snippet quoted from a script or a module).
- `<!-- not-run: REASON -->` before a block: not executed; REASON says why on the page.
- `<!-- after-session: REASON -->` before a python block: it continues the page's `$`
  session above it (the nearest one), so it runs in that session's directory, after it
  (e.g. it loads the checkpoint the session's `tapegrad train` wrote). When this process
  has not run that session (another xdist worker did, or `-k` left it out), it is run
  first; its output is checked by its own test, not here.
- anything else fails ("unmarked code block"), so a new block cannot slip in unchecked;
  an indented (4-space) code block fails too: it must be fenced.

Expected output is compared exactly, except for two documented markers:
`...` matches any text (doctest's ELLIPSIS; also across lines), and `~` before a number
(`~0.6s`, `~114 us`, `~1.7x`) marks a timing or machine-dependent number: any number
matches there.
"""
import atexit
import contextlib
import difflib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from sybil import Region
from sybil.parsers.markdown.lexers import RawFencedCodeBlockLexer

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"<!--\s*(not-run|excerpt|after-session):\s*(.*?)\s*-->\s*\Z", re.S)
# `...` (any text) or `~` followed by a number (any number)
WILDCARD = re.compile(r"(\.\.\.|~-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?)")
NUMBER = r"-?\d[\d,]*(?:\.\d+)?(?:e[+-]?\d+)?"
COMMAND_TIMEOUT = 300  # seconds; the slowest block (a 10-epoch MNIST run) takes ~10 s
_LEXER = RawFencedCodeBlockLexer(info_pattern=re.compile(r"(?P<info>[^\n]*)\n"))
_output_cache = {}     # python commands run in the repository root are deterministic
_session_dirs = {}     # (page, line) of a `$` session -> the directory it ran in


def matches(expected, actual):
    """True when `actual` is `expected` with the `...` and `~number` markers filled in."""
    if expected == actual:
        return True
    parts = WILDCARD.split(expected)
    pattern = "".join(re.escape(p) if i % 2 == 0 else (".*?" if p == "..." else NUMBER)
                      for i, p in enumerate(parts))
    return re.fullmatch(pattern, actual, re.S) is not None


def _mismatch(what, expected, actual):
    diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                        "the page", "the real output"))
    return (f"{what}: the page differs from the real output "
            f"(`...` and `~number` are wildcards)\n{diff}\n---- the real output ----\n{actual}")


# ---- evaluators: each returns None (pass) or the failure message ----------------------
def _run_python(code, expected, where, cwd=None):
    import numpy as np
    import tapegrad as tg
    tg.manual_seed(0)
    np.random.seed(0)
    buf = io.StringIO()
    namespace = {"__name__": "__doc_block__"}
    before = os.getcwd()
    try:
        if cwd is not None:
            os.chdir(cwd)       # contextlib.chdir is 3.11+; the project supports 3.10
        with contextlib.redirect_stdout(buf):
            exec(compile(code, where, "exec"), namespace)
    finally:
        os.chdir(before)
    if not matches(expected, buf.getvalue()):
        return _mismatch(f"{where} (python block)", expected, buf.getvalue())
    return None


def _session(text):
    """[(command, expected output)] from a `$ ...` block; a command line that ends in a
    backslash continues on the next line (the two are joined with a space, as a shell
    does)."""
    steps, continued = [], False
    for line in text.splitlines(True):
        if continued:
            steps[-1][0] = steps[-1][0][:-1].rstrip() + " " + line.strip()
        elif line.startswith("$ "):
            steps.append([line[2:].strip(), ""])
        else:
            steps[-1][1] += line
            continue
        continued = steps[-1][0].endswith("\\")
    return steps


def _command_env(tmp):
    env = dict(os.environ)
    env.update(PYTHONPATH=str(ROOT), PYTHONUNBUFFERED="1", TQDM_DISABLE="1",
               OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1",
               TAPEGRAD_DATA=str(Path(tmp) / "data"), COLUMNS="80",
               # a closed local port as proxy: every download fails at once, as offline
               http_proxy="http://127.0.0.1:9", https_proxy="http://127.0.0.1:9",
               HTTP_PROXY="http://127.0.0.1:9", HTTPS_PROXY="http://127.0.0.1:9")
    env.pop("NO_PROXY", None)
    env.pop("no_proxy", None)
    return env


def _run_command(command, tmp):
    words = shlex.split(command)
    extra = {}
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=\S*", words[0]):  # VAR=value prefixes
        k, v = words.pop(0).split("=", 1)
        extra[k] = v
    if words[0] == "python":
        argv, cwd = [sys.executable] + words[1:], ROOT
    elif words[0] == "tapegrad":
        exe = Path(sys.executable).with_name("tapegrad")
        argv = [str(exe) if exe.exists() else "tapegrad"] + words[1:]
        cwd = Path(tmp)
    else:
        raise ValueError(f"unknown command {words[0]!r} (python and tapegrad are run; mark "
                         "other blocks <!-- not-run: reason -->)")
    key = (tuple(argv), tuple(sorted(extra.items())))
    if cwd == ROOT and key in _output_cache:
        return _output_cache[key]
    env = _command_env(tmp)
    env.update(extra)
    res = subprocess.run(argv, cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True, timeout=COMMAND_TIMEOUT)
    if cwd == ROOT:
        _output_cache[key] = res.stdout
    return res.stdout


def _run_session(text, where):
    """Run the block's commands in a fresh directory, kept (until the test run ends) for
    an `after-session` python block that continues the session."""
    tmp = tempfile.mkdtemp(prefix="tapegrad-doc-")
    atexit.register(shutil.rmtree, tmp, ignore_errors=True)
    _session_dirs[where] = tmp
    for command, expected in _session(text):
        actual = _run_command(command, tmp)
        if not matches(expected, actual):
            return _mismatch(f"{where}: $ {command}", expected, actual)
    return None


def _run_after_session(code, expected, where, session):
    """A python block that continues the session `session` = (its text, its where)."""
    if session is None:
        return f"{where}: after-session, but no `$` session comes before this block on the page"
    text, session_where = session
    if session_where not in _session_dirs:
        _run_session(text, session_where)       # its own test reports a mismatch
    return _run_python(code, expected, where, cwd=_session_dirs[session_where])


def _check_excerpt(block, rel, where):
    path = ROOT / rel
    if not path.is_file():
        return f"{where}: <!-- excerpt: {rel} --> names no file"
    want = textwrap.dedent(block).rstrip("\n").splitlines()
    lines = path.read_text().splitlines()
    for i in range(len(lines) - len(want) + 1):
        if textwrap.dedent("\n".join(lines[i:i + len(want)])).splitlines() == want:
            return None
    return f"{where}: this block is not (or no longer) a verbatim excerpt of {rel}:\n{block}"


def _fail(message):
    def evaluate(example):
        return message
    return evaluate


# ---- the parser ---------------------------------------------------------------------------
def _is_output(info, source):
    return info.strip() in ("", "text") and not source.startswith("$ ")


def _marker(text, start):
    """The <!-- not-run / excerpt --> comment that ends right before position `start`."""
    before = text[:start].rstrip()
    begin = before.rfind("<!--")
    if begin < 0:
        return None, None
    m = MARKER.match(before[begin:])
    return (m.group(1), m.group(2)) if m else (None, None)


def parse_blocks(document):
    """Sybil parser: one Region per code block (a python block and its output: one)."""
    text, name = document.text, os.path.relpath(document.path, ROOT)
    fences = list(_LEXER(document))
    session = None      # the last `$` session above: (its text, its where)
    i = 0
    while i < len(fences):
        region = fences[i]
        info, source = region.lexemes["info"].strip(), str(region.lexemes["source"])
        where = f"{name}:{text.count(chr(10), 0, region.start) + 1}"
        kind, arg = _marker(text, region.start)
        end = region.end
        if kind == "not-run":
            evaluator = None if arg else _fail(f"{where}: not-run needs a reason")
            nxt = fences[i + 1] if i + 1 < len(fences) else None
            if (info == "python" and nxt is not None and not text[region.end:nxt.start].strip()
                    and _is_output(nxt.lexemes["info"], str(nxt.lexemes["source"]))):
                i += 1  # its output block is not run either
        elif kind == "excerpt":
            evaluator = (lambda ex, s=source, a=arg, w=where: _check_excerpt(s, a, w))
        elif kind == "after-session" and (info != "python" or not arg):
            evaluator = _fail(f"{where}: after-session marks a python block, with a reason")
        elif info == "python":
            expected = ""
            nxt = fences[i + 1] if i + 1 < len(fences) else None
            if (nxt is not None and not text[region.end:nxt.start].strip()
                    and _is_output(nxt.lexemes["info"], str(nxt.lexemes["source"]))):
                expected, end = str(nxt.lexemes["source"]), nxt.end
                i += 1
            if kind == "after-session":
                evaluator = (lambda ex, s=source, e=expected, w=where, p=session:
                             _run_after_session(s, e, w, p))
            else:
                evaluator = (lambda ex, s=source, e=expected, w=where: _run_python(s, e, w))
        elif source.startswith("$ "):
            evaluator = (lambda ex, s=source, w=where: _run_session(s, w))
            session = (source, where)
        else:
            evaluator = _fail(f"{where}: unmarked code block: make it runnable (```python, "
                              "or `$ command` lines with their output) or put "
                              "<!-- not-run: reason --> or <!-- excerpt: path --> before it")
        if evaluator is not None:
            yield Region(region.start, end, source, evaluator)
        i += 1
    yield from _indented_blocks(text, name, [(f.start, f.end) for f in fences])


def _indented_blocks(text, name, spans):
    """Markdown's indented code blocks are code blocks too: each one fails, asking for a
    fence (so that it is run, or marked with the reason it is not)."""
    offset, previous_blank = 0, True
    for number, line in enumerate(text.splitlines(True), 1):
        inside = any(a <= offset < b for a, b in spans)
        if not inside and previous_blank and re.match(r" {4,}\S", line):
            yield Region(offset, offset + len(line.rstrip("\n")), line, _fail(
                f"{name}:{number}: an indented code block: write it as a fenced block "
                "(```python / `$ command` lines, or with <!-- not-run: reason -->)"))
        previous_blank = not line.strip()
        offset += len(line)
