"""Pieces of `tg.save` / `tg.load` (the public front is `tapegrad.serialization`):
the nested-structure tree (`tree`), its leaves beyond JSON's scalars (`leaves`: bytes,
complex, dtype, device), the dataclass / argparse.Namespace instances and the rules that
rebuild them (`objects`), the one error class of a malformed tree (`errors`), memory
sharing between saved arrays (`sharing`), atomic writes (`atomic`) and the read-only
reader of the old `.npz` format (`npz_v1`)."""
