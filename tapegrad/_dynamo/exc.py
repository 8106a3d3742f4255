"""The exceptions of `torch._dynamo.exc` that tg.compile raises (torch 2.13's names and
bases: `Unsupported` is a `TorchDynamoException`, a `RuntimeError`)."""


class TorchDynamoException(RuntimeError):
    pass


class Unsupported(TorchDynamoException):
    """A graph break under `fullgraph=True`: the compiled call read a tensor's values in
    Python (`bool()`, `.item()`, an index computed from values), so it is not one graph."""
