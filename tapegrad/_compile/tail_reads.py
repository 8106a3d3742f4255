"""`return loss.item()`: a Python number read at the very end of a compiled call.

A tensor's value read in Python (`.item()`) is a graph break: what the call's Python then
does with the number is invisible to the tape, so the call runs eagerly. One use is both
common and safe to replay: the last thing the compiled function does is read the number
and return it (`return loss.item()`, `return {"loss": loss.item()}`), after every op of
the step. A replay then returns `array.item()` of the replayed array: the number eager
would have read.

`TailReads` decides whether a call did only that. At the first `.item()` (a float) read
directly by the compiled function's own frame, it starts watching that frame's remaining
bytecode (sys.settrace with opcode events, only until the frame returns): allowed are
loads and stores of locals, constants, building the tuple/list/dict returned, the return,
and further `.item()` calls. Anything else (arithmetic on the number, a comparison, a
branch, a call, an attribute store) or a nested Python call makes the read a graph break
as before. The capture checks that no step was recorded after the first read and maps
each returned float, by identity, to the tensor it was read from (capture.py `finish`).
"""
import dis
import sys

# opcodes after the read that only move values between locals, the stack and the result
_MOVES = frozenset((
    "NOP", "RESUME", "CACHE", "EXTENDED_ARG", "LOAD_FAST", "LOAD_FAST_CHECK", "STORE_FAST",
    "LOAD_CONST", "BUILD_TUPLE", "BUILD_LIST", "BUILD_MAP", "BUILD_CONST_KEY_MAP",
    "LIST_EXTEND", "RETURN_VALUE", "RETURN_CONST", "POP_TOP", "COPY", "SWAP", "PUSH_NULL",
    "LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"))
# the opcodes of `t.item()` itself (the method load, the call; the callee is checked by
# its own frame: Tensor.item)
_ITEM_LOADS = frozenset(("LOAD_METHOD", "LOAD_ATTR"))
_ITEM_CALLS = frozenset(("PRECALL", "CALL", "CALL_METHOD"))  # (CALL_METHOD: Python 3.10)

_INSTRUCTIONS = {}


def _instruction(code, offset):
    """(opname, argval) of the instruction at `offset` of `code`."""
    table = _INSTRUCTIONS.get(code)
    if table is None:
        table = _INSTRUCTIONS[code] = {i.offset: (i.opname, i.argval)
                                      for i in dis.get_instructions(code)}
    return table.get(offset, ("?", None))


class TailReads:
    """The `.item()` reads at the end of one captured call (see the module docstring)."""

    def __init__(self, item_code, top_code):
        self.item_code = item_code  # Tensor.item's code: the one call allowed after a read
        self.top_code = top_code    # the compiled function's code: the reads' caller
        self.numbers = []  # (tensor, the float .item() read)
        self.top = None    # the compiled function's frame, watched after the first read
        self.bad = None    # why the reads are no tail (a text), or None
        self.returned = False
        self.mark = None   # the capture's counts at the first read (capture.py)
        self._method = False

    def read(self, tensor, value, mark):
        """A float read by `.item()`: True when it may be a tail read (now watched)."""
        if type(value) is not float or self.bad is not None:
            return False
        frame = sys._getframe(1)
        while frame is not None and frame.f_code is not self.item_code:
            frame = frame.f_back
        if frame is None or frame.f_back is None:
            return False
        caller = frame.f_back
        if caller.f_code is not self.top_code:
            return False  # read in a helper: what the caller does with it is not watched
        if self.top is None:
            if sys.gettrace() is not None:
                return False  # a debugger or coverage holds the trace hook: leave it
            self.top, self.mark = caller, mark
            caller.f_trace_lines = False
            caller.f_trace_opcodes = True
            caller.f_trace = self._watch_top
            sys.settrace(self._watch_calls)
        elif caller is not self.top:
            return False
        self.numbers.append((tensor, value))
        return True

    def stop(self):
        """Stop watching (after the call returned, or raised)."""
        if self.top is not None:
            sys.settrace(None)
            self.top.f_trace = None
            self.top = None

    def _watch_calls(self, frame, event, arg):
        # a Python call from the watched frame: only Tensor.item (and what it calls)
        if event == "call" and frame.f_back is self.top and frame.f_code is not self.item_code:
            self.bad = f"a call of {frame.f_code.co_name} after it"
        return None

    def _watch_top(self, frame, event, arg):
        if event == "opcode":
            name, argval = _instruction(frame.f_code, frame.f_lasti)
            if name in _ITEM_LOADS and argval == "item":
                self._method = True
            elif name in _ITEM_CALLS and self._method:
                if name != "PRECALL":
                    self._method = False
            elif name not in _MOVES:
                self.bad = self.bad or f"{name} after it"
        elif event == "return":
            self.returned = True
        elif event == "exception":
            self.bad = self.bad or "an exception after it"
        return self._watch_top
