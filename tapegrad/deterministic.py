"""torch.use_deterministic_algorithms and the debug-mode pair: the switches, as state.

tapegrad is deterministic on the CPU already: every op is a NumPy computation with a
fixed order, backward sums each tensor's gradient contributions in a fixed order, and
random numbers come from seeded generators. So the switches only record what a program
set (with torch's argument checks) and report it back; nothing reads them.
"""
_state = {"mode": False, "warn_only": False}
_DEBUG_NAMES = ("default", "warn", "error")


def use_deterministic_algorithms(mode, *, warn_only=False):
    # torch checks both with its C++ binding's messages
    for name, v in (("mode", mode), ("warn_only", warn_only)):
        if not isinstance(v, bool):
            where = "(position 1) " if name == "mode" else ""
            raise TypeError(f"_set_deterministic_algorithms(): argument '{name}' {where}must be "
                            f"bool, not {type(v).__name__}")
    _state["mode"], _state["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _state["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["warn_only"]


def set_deterministic_debug_mode(debug_mode):
    """0/"default": off; 1/"warn": deterministic, warn only; 2/"error": deterministic."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_NAMES:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = _DEBUG_NAMES.index(debug_mode)
    elif not isinstance(debug_mode, int):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    elif debug_mode == 1:
        use_deterministic_algorithms(True, warn_only=True)
    elif debug_mode == 2:
        use_deterministic_algorithms(True)
    else:
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")


def get_deterministic_debug_mode():
    if not _state["mode"]:
        return 0
    return 1 if _state["warn_only"] else 2
