"""Refresh the output blocks of the lesson pages from the real example scripts.

A lesson page quotes a script's output in a fenced block whose first line is the
command, e.g.

    ```text
    $ python examples/lesson_01_reuse.py
    ...the exact output...
    ```

`python docs/lessons/sync_outputs.py` reruns each quoted script and rewrites the block;
tests/test_lessons.py fails when a block differs from the script's real output.
"""
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BLOCK = re.compile(r"```text\n\$ python (examples/\S+\.py)\n(.*?)```", re.S)


def run_script(rel):
    res = subprocess.run([sys.executable, str(ROOT / rel)], cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return res.stdout


def blocks(text):
    """(script path, quoted output) for each output block of a page."""
    return [(m.group(1), m.group(2)) for m in BLOCK.finditer(text)]


def main():
    cache = {}
    for page in sorted(Path(__file__).parent.glob("*.md")):
        text = page.read_text()

        def repl(m):
            rel = m.group(1)
            if rel not in cache:
                cache[rel] = run_script(rel)
            return f"```text\n$ python {rel}\n{cache[rel]}```"

        new = BLOCK.sub(repl, text)
        if new != text:
            page.write_text(new)
            print(f"updated {page.name}")


if __name__ == "__main__":
    main()
