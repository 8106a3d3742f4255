"""The lessons in Korean (docs/ko/): one page per lesson page (and the exercises page),
with the same code blocks and markers in the same order (the doc tests run them too,
conftest.py collects docs/*/*.md), prose in Korean, an index linking every page, and
every relative link and picture of the lesson pages resolving to a file."""
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
FENCE = re.compile(r"^```[^\n]*\n.*?^```[ \t]*$", re.M | re.S)
MARKER = re.compile(r"<!--\s*(not-run|excerpt|after-session):.*?-->", re.S)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")
HANGUL = re.compile(r"[\uac00-\ud7a3]")
PAIRS = [(p, DOCS / "ko" / p.name) for p in sorted((DOCS / "lessons").glob("[0-9]*.md"))]
PAIRS.append((DOCS / "exercises" / "README.md", DOCS / "ko" / "exercises.md"))


def test_every_lesson_has_a_korean_page():
    assert len(PAIRS) >= 12
    missing = [str(ko.relative_to(ROOT)) for _, ko in PAIRS if not ko.exists()]
    assert not missing


@pytest.mark.parametrize("en,ko", PAIRS, ids=lambda p: p.name)
def test_same_code_blocks_and_markers(en, ko):
    en_text, ko_text = en.read_text(), ko.read_text()
    assert FENCE.findall(ko_text) == FENCE.findall(en_text)
    assert [m.group(0) for m in MARKER.finditer(ko_text)] == \
        [m.group(0) for m in MARKER.finditer(en_text)]


@pytest.mark.parametrize("en,ko", PAIRS, ids=lambda p: p.name)
def test_prose_is_korean(en, ko):
    prose = [line for line in FENCE.sub("", ko.read_text()).splitlines()
             if re.search(r"[A-Za-z\uac00-\ud7a3]{3}", line)
             and not line.startswith(("<!--", "|---", "!["))]
    korean = [line for line in prose if HANGUL.search(line)]
    assert len(korean) >= 0.8 * len(prose), [p for p in prose if p not in korean][:5]


def test_index_links_every_korean_page():
    index = (DOCS / "ko" / "README.md").read_text()
    for _, ko in PAIRS:
        assert f"]({ko.name})" in index, ko.name
    assert HANGUL.search(index)


PAGES = sorted({*(DOCS / "lessons").glob("*.md"), *(DOCS / "ko").glob("*.md"),
                *(DOCS / "exercises").glob("*.md")})


@pytest.mark.parametrize("page", PAGES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_relative_links_resolve(page):
    broken = [target for target in LINK.findall(page.read_text())
              if "://" not in target and not (page.parent / target).exists()]
    assert not broken
