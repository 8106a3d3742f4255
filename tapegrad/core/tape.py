"""The hook `tg.compile`'s capture listens on (tapegrad/_compile): while a tape is active on
this thread, the library reports what it computes, so one forward can be replayed later.

    apply()           every recorded op (record.py calls `tape.op(...)`)
    built(node, out)  an op whose Node was built by hand (split/unbind pieces)
    host(fn, *args)   an array step the API layer computes outside an op, which a replay
                      must repeat: a random draw (dropout's mask), running statistics
    const(arr)        an array a creation function made from Python values only (arange)
    data_read(what)   Python read a tensor's values (.item(), bool(), ...): the forward's
                      control flow may depend on them, so it cannot be replayed
    call(fn, *args)   a Python call with effects a replay must repeat as a call, in
                      order (optimizer.step, zero_grad, clip_grad_norm_, a scheduler's
                      step): the tape records it and runs it unseen (its own ops are not
                      recorded)
    backward(run, *a) `backward()` inside a captured call: the tape watches the walk
                      (whole-step capture), then `run(*a)` has run
    write(t, res)     an in-place write outside the graph (under no_grad, through
                      `.data`): a replay copies `res` into `t`'s array again
    grad_read(t, g)   the user's `t.grad` (`p.data -= lr * p.grad` after backward): a
    grad_set(t, v)    replay reads it again; `t.grad = None`: a replay sets it again

Everything is a no-op unless some thread captures: the functions test the process-wide
count `anywhere.tapes` first (a plain attribute), as apply() does for forward AD.
"""
from .state import anywhere, state, _lock

# The structure epoch: bumped by every change a compiled call's guards would see in a
# module or parameter (attributes set, train/eval, hooks, parameters registered,
# requires_grad, `.data =`, dtype). While it stays, a module's guard key is unchanged,
# so the guards skip recomputing it (tapegrad/_compile/guards.py, python_guards.py).
epoch = [0]


def changed():
    epoch[0] += 1


def begin(tape):
    """Make `tape` this thread's listener (end() removes it)."""
    with _lock:
        anywhere.tapes += 1
    state.tape = tape


def end():
    state.tape = None
    with _lock:
        anywhere.tapes -= 1


def current():
    return state.tape if anywhere.tapes else None


def host(fn, *args):
    """`fn(*args)`, reported to an active tape so a replay calls it again in order."""
    out = fn(*args)
    if anywhere.tapes and state.tape is not None:
        state.tape.host(fn, args, out)
    return out


def const(arr):
    if anywhere.tapes and state.tape is not None:
        state.tape.const(arr)
    return arr


def built(node, outputs):
    if anywhere.tapes and state.tape is not None:
        state.tape.built(node, outputs)


def data_read(what, tensor=None, value=None):
    """Python read a tensor's values (`what`); `.item()` also names the tensor and the
    number it read (a tape may replay a read that ends the call: _compile/tail_reads.py)."""
    if anywhere.tapes and state.tape is not None:
        state.tape.data_read(what, tensor, value)


def call(fn, *args, **kwargs):
    """`fn(*args, **kwargs)`; an active tape records it (see the module docstring). The
    functions that call this test `current()` first: without a tape, they run as is."""
    tape = state.tape if anywhere.tapes else None
    if tape is None:
        return fn(*args, **kwargs)
    return tape.call(fn, args, kwargs)


def backward(run, *args):
    tape = state.tape if anywhere.tapes else None
    if tape is None:
        return run(*args)
    return tape.backward(run, args)


def write(t, res):
    """`res` copied into `t`'s array (an in-place op outside the graph) by this thread's
    tape, which records the write; the caller found the tape active (`current()`) and
    checked shapes and casting."""
    state.tape.write(t, res)


def grad_read(t, g):
    if anywhere.tapes and state.tape is not None:
        state.tape.grad_read(t, g)


def grad_set(t, value):
    if anywhere.tapes and state.tape is not None:
        state.tape.grad_set(t, value)
