"""The public tensor functions (`tg.cat`, `tg.stack`, `tg.sigmoid`, `tg.tanh`, `tg.relu`)
for the recurrent layers, imported in ONE place.

`tapegrad.nn` cannot `import tapegrad` (that would be an import cycle: the package's
`__init__` imports `nn`), so the layers take these names from where `tg.*` takes them;
when the core restructure moves them, only this file changes.
"""
from ..ops.functions import relu, sigmoid, tanh  # noqa: F401  (= tg.relu, tg.sigmoid, tg.tanh)
from ..ops.shape_functions import cat, stack  # noqa: F401  (= tg.cat, tg.stack)
