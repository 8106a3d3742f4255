"""Render the lessons' graph pictures into docs/images/ (tg.viz.to_svg; needs graphviz's
`dot` program). Each lesson script has a function that builds its graph and runs
backward (so the boxes show data and grad); `tests/test_lessons_pictures.py` checks that
every committed picture shows the graph that function builds today.

    python examples/lesson_pictures.py
"""
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import tapegrad as tg  # noqa: E402

IMAGES = ROOT / "docs" / "images"
# picture file -> (lesson script, the function that returns the graph's root)
PICTURES = {
    "lesson_03_one_step.svg": ("lesson_03_logistic_map.py", "picture"),
    "lesson_04_fare.svg": ("lesson_04_taxi_fare.py", "picture"),
    "lesson_05_sqrt.svg": ("lesson_05_abs_vs_sqrt.py", "picture"),
    "lesson_06_shared.svg": ("lesson_06_accumulation.py", "picture"),
    "lesson_07_micro.svg": ("lesson_07_microbatches.py", "picture"),
    "lesson_08_rank0.svg": ("lesson_08_data_parallel.py", "picture"),
    "lesson_09_skip.svg": ("lesson_09_topological_order.py", "picture"),
    "lesson_10_bias.svg": ("lesson_10_broadcasting.py", "picture"),
    "lesson_11_recipe.svg": ("lesson_11_inside_a_tensor.py", "picture"),
}


def load(script):
    """Import examples/<script> as a module."""
    path = ROOT / "examples" / script
    spec = importlib.util.spec_from_file_location(f"_picture_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def root_of(name):
    """The graph's root for picture `name`, built by its lesson's function."""
    script, func = PICTURES[name]
    return getattr(load(script), func)()


def main():
    IMAGES.mkdir(parents=True, exist_ok=True)
    for name in PICTURES:
        (IMAGES / name).write_text(tg.viz.to_svg(root_of(name)))
        print(f"wrote docs/images/{name}")


if __name__ == "__main__":
    main()
