"""The derivative table, one file per op family: each `defop` entry is a primitive's forward,
its reverse rule (VJP), its forward rule (JVP), what the rules read, and what the tools say
about it (explain's text, anomaly mode's hint). The public functions that call these
entries live one level up, in `ops/<family>.py`."""
