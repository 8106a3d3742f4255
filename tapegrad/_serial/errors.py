"""`TreeError`: the checkpoint's structure is malformed. Its own module so that every
piece of the tree (`tree`, `leaves`, `objects`) raises the same class without importing
each other; `tg.load` turns it into one RuntimeError naming the file."""


class TreeError(Exception):
    """The tree (or its JSON text) is malformed; the caller names the file."""
