"""The package's import rule: no module below the command line imports the package root
at module level (`import tapegrad`, `from tapegrad import name`, `from .. import name`
where name is not a submodule). Such an import is an upward edge into tapegrad/__init__.py
that makes a module's meaning depend on the order the package is initialised, and that
the cycle checker does not count. The CLI (cli.py, __main__.py, train/) and __init__.py
files may; everything else imports names from the module that defines them.
"""
import ast
import os

import tapegrad

ROOT = os.path.dirname(os.path.abspath(tapegrad.__file__))
PKG = os.path.basename(ROOT)


def _allowed(rel):
    return (rel in ("cli.py", "__main__.py") or rel.startswith("train" + os.sep)
            or os.path.basename(rel) == "__init__.py")


def _is_submodule(dirpath, name):
    return (os.path.exists(os.path.join(dirpath, name + ".py"))
            or os.path.isdir(os.path.join(dirpath, name)))


def _package_of(rel, level):
    """The directory a relative import of `level` dots in module `rel` starts from."""
    parts = os.path.dirname(rel).split(os.sep) if os.path.dirname(rel) else []
    if level - 1 > len(parts):
        return None
    return os.path.join(ROOT, *parts[:len(parts) - (level - 1)])


def root_imports(path, rel):
    """The module-level statements of one file that import names from the package root."""
    found = []
    for node in ast.parse(open(path, encoding="utf-8").read(), path).body:
        if isinstance(node, ast.Import):
            if any(a.name == PKG for a in node.names):
                found.append((node.lineno, ast.unparse(node)))
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module == PKG:
                start = ROOT
            elif node.level and node.module is None and _package_of(rel, node.level) == ROOT:
                start = ROOT
            else:
                continue
            if any(not _is_submodule(start, a.name) for a in node.names):
                found.append((node.lineno, ast.unparse(node)))
    return found


def test_no_module_below_the_cli_imports_the_package_root():
    offenders = []
    for dirpath, _, files in os.walk(ROOT):
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            rel = os.path.relpath(path, ROOT)
            if _allowed(rel):
                continue
            offenders += [f"tapegrad/{rel}:{line}: {text}"
                          for line, text in root_imports(path, rel)]
    assert not offenders, ("module-level imports of the package root below the CLI (import "
                           "the name from its defining module instead):\n" + "\n".join(offenders))


def test_the_checker_sees_each_form(tmp_path):
    """The checker is not vacuous: each forbidden form is found, the allowed ones are not."""
    cases = {
        "import tapegrad as tg\n": 1,
        "from tapegrad import Tensor\n": 1,
        "from tapegrad import nn\n": 0,              # a submodule
        "from .. import no_grad\n": 1,               # in tapegrad/x/y.py: the root
        "from .. import optim\n": 0,
        "from . import sibling\n": 0,
        "def f():\n    import tapegrad\n": 0,        # not at module level
    }
    for src, n in cases.items():
        path = tmp_path / "y.py"
        path.write_text(src)
        assert len(root_imports(str(path), os.path.join("x", "y.py"))) == n, src
