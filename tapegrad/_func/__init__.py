"""Pieces behind `tapegrad.func`: pytrees (`pytree.py`), `vmap` (`vmap.py`), and the
stateless module API, `functional_call` / `stack_module_state` (`stateless.py`).

The public names are re-exported by `tapegrad/func.py`; import them from there.
"""
