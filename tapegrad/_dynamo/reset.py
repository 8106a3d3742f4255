"""`torch._dynamo.reset()`: every compiled callable forgets its captures."""
import weakref

# every Runner (tapegrad/_compile/runner.py) registers here when made
runners = weakref.WeakSet()


def reset():
    for r in list(runners):
        r.reset()
