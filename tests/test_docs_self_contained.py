"""The pages speak of the project alone (no reference a reader of the repository cannot
resolve), `tapegrad train names --help` describes the layer the model has, and
examples/value_mlp.py is linked from the docs."""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# references to material outside the repository: the spec, its numbered examples, issue
# numbers used as names, the development tools' directory
UNRESOLVABLE = re.compile(r"shared/spec|worked[- ]examples? \d|issue-\d+ (model|CNN)|"
                          r"\.\./shared/|issue \d+'s measurement", re.I)


def _reader_files():
    yield ROOT / "README.md"
    for folder, pattern in (("docs", "**/*.md"), ("examples", "**/*.py"),
                            ("exercises", "**/*.py")):
        yield from sorted((ROOT / folder).glob(pattern))


def test_docs_and_examples_speak_of_the_project_alone():
    found = [f"{path.relative_to(ROOT)}:{i}: {line.strip()}"
             for path in _reader_files()
             for i, line in enumerate(path.read_text().splitlines(), 1)
             if UNRESOLVABLE.search(line)]
    assert not found, "\n".join(found)


def test_names_help_says_the_hidden_layer_has_no_bias():
    from tapegrad.train.char_models import MakemoreMLP
    model = MakemoreMLP()
    assert (model.hidden.in_features, model.hidden.out_features) == (30, 200)
    assert model.hidden.bias is None
    res = subprocess.run([sys.executable, "-m", "tapegrad", "train", "names", "--help"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0
    assert "Linear(30, 200, bias=False)" in res.stdout
    assert "Linear(30, 200) " not in res.stdout.replace("\n", " ")


def test_value_mlp_is_linked():
    pages = [ROOT / "README.md", ROOT / "docs" / "lessons" / "README.md",
             ROOT / "docs" / "lessons" / "02-value.md"]
    assert all("examples/value_mlp.py)" in p.read_text() for p in pages)


def test_debugging_item_10_shows_pytorchs_first_line():
    page = (ROOT / "docs" / "debugging-backward.md").read_text()
    item = page.split("## 10.", 1)[1]
    session = item.split("$ python examples/debugging_checklist.py 10\n", 1)[1]
    lines = session.splitlines()
    assert lines[1].startswith("Trying to backward through the graph a second time")
    assert lines[2].startswith("This graph reaches a tensor")
