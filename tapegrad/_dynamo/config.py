"""`torch._dynamo.config`'s settings tg.compile reads (at each call, so a change applies
at once)."""

# captures per compiled callable (guard keys and the variants of one key together); past
# it, new calls run eagerly, with a one-time warning (torch's `recompile_limit`, 8)
recompile_limit = 8

# tg.compile never slower than eager: the first `trial_calls` calls of a new capture each
# way alternate eager and replay (timed in the thread's CPU time until the next call);
# a replay that is not faster is dropped for eager (the results are the same either way)
fallback_if_slower = True
trial_calls = 3
