"""The lessons' pictures (docs/images/lesson_*.svg, made by examples/lesson_pictures.py):
each shows the graph its lesson's function builds today, with the data and gradients
that function computes, and each lesson page shows its picture."""
import html
import re
import sys
from pathlib import Path

import pytest

from tapegrad.viz.draw import graph_items

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
import lesson_pictures  # noqa: E402


def _svg_texts(svg):
    # graphviz writes a run of spaces as no-break spaces
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", svg)
    return [html.unescape(t).replace("\xa0", " ") for t in texts]


@pytest.mark.parametrize("name", sorted(lesson_pictures.PICTURES))
def test_picture_shows_the_graph_its_lesson_builds(name):
    svg = (ROOT / "docs" / "images" / name).read_text()
    texts = _svg_texts(svg)
    nodes, edges, note = graph_items(lesson_pictures.root_of(name))
    want = [line for _, kind, lines in nodes if kind != "note" for line in lines]
    assert want and sorted(t.strip() for t in texts) == sorted(w.strip() for w in want)
    n_ops = sum(1 for _, kind, _ in nodes if kind == "op")
    assert svg.count("<ellipse") == n_ops
    assert svg.count('class="edge"') == len(edges)


@pytest.mark.parametrize("name", sorted(lesson_pictures.PICTURES))
def test_a_lesson_page_shows_the_picture(name):
    pages = [p for p in (ROOT / "docs").glob("*/*.md") if f"images/{name}" in p.read_text()]
    assert any(p.parent.name == "lessons" for p in pages), name
    assert any(p.parent.name == "ko" for p in pages), name
