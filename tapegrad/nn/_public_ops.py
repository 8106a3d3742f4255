"""The public tensor functions (`tg.cat`, `tg.stack`, `tg.sigmoid`, `tg.tanh`, `tg.relu`)
for the recurrent layers, imported in ONE place.

`tapegrad.nn` cannot `import tapegrad` (that would be an import cycle: the package's
`__init__` imports `nn`), so the layers take these names from where `tg.*` takes them;
when the core restructure moves them, only this file changes.
"""
from ..ops.pointwise import relu, sigmoid, tanh
from ..ops.shape import cat, stack
