"""Per-thread autograd state: what the recording code and the walk consult.

PyTorch keeps grad mode per thread: while one thread sits in `no_grad` or runs
backward (which turns recording off while it works), ops in another thread are
recorded as usual. tapegrad keeps every such switch on one `threading.local` object,
so each thread sees its own values and starts from the defaults below.

    grad_enabled   ops record a Node when an input requires grad (no_grad sets False)
    dual           the active forward-AD level, or None. apply() calls
                   `dual.propagate(op, inputs, args, saved, result)` after each op
                   (autograd/forward_ad.py provides it)
    record_sites   > 0: each Node remembers the file:line that created it
    observers      name -> fn(node, i, g, gi), called by the walk for every input
                   gradient a rule returns (anomaly mode, strict mode, explain)
    last_saved     the values the last op with extra=True saved (record.apply_saved
                   hands them to callers such as max(dim), which returns the indices)
    no_grad_block  the user's `with no_grad():` now in force (cuts.NoGradBlock: its
                   file:line), or None (also inside tapegrad's own no_grad blocks): ops on
                   inputs that require grad note them for autograd.why_no_grad
    tape           tg.compile's capture listening to this thread's ops, or None
                   (core/tape.py)
    retain_graph   the running walk's retain_graph: a `backward=` rule may free what its
                   node holds as it goes when False (tg.compile's replayed node does)
"""
import threading


class _Anywhere:
    """Process-wide counts kept by the setters below: does ANY thread have a dual level
    open / record sites? `apply` tests these plain attributes first (a few ns) and reads
    the thread-local value (about 30 ns) only when one is switched on somewhere."""

    duals = 0
    site_threads = 0
    tapes = 0  # threads capturing for tg.compile (core/tape.py)


anywhere = _Anywhere()
_lock = threading.Lock()


class AutogradState(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self._dual = None
        self._record_sites = 0
        self.observers = {}
        self.last_saved = None
        self.no_grad_block = None
        self.tape = None  # tg.compile's capture listening on this thread (core/tape.py)
        self.retain_graph = False  # the running walk's retain_graph (engine.run)
        # the running walk's list of arrays from outside the engine (engine.run): what a
        # custom Function's backward returned is the user's, never stolen into a .grad
        self.foreign = None

    @property
    def dual(self):
        return self._dual

    @dual.setter
    def dual(self, level):
        with _lock:
            anywhere.duals += (level is not None) - (self._dual is not None)
        self._dual = level

    @property
    def record_sites(self):
        return self._record_sites

    @record_sites.setter
    def record_sites(self, n):
        with _lock:
            anywhere.site_threads += (n > 0) - (self._record_sites > 0)
        self._record_sites = n


state = AutogradState()
