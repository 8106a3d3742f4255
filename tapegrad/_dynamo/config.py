"""`torch._dynamo.config`'s settings tg.compile reads (at each call, so a change applies
at once)."""

# captures per compiled callable (guard keys and the variants of one key together); past
# it, new calls run eagerly, with a one-time warning (torch's `recompile_limit`, 8)
recompile_limit = 8
