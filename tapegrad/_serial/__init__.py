"""Pieces of `tg.save` / `tg.load` (the public front is `tapegrad.serialization`):
the nested-structure tree (`tree`), memory sharing between saved arrays (`sharing`),
atomic writes (`atomic`) and the read-only reader of the old `.npz` format (`npz_v1`)."""
