"""`tapegrad.onnx`: importable like torch.onnx, but exporting is not supported.

Programs that `import torch.onnx` at the top (and export only on request) run; calling
`export` raises a clear NotImplementedError instead of an AttributeError."""

__all__ = ["export", "is_in_onnx_export"]


def export(model, args=(), f=None, *a, **kw):
    raise NotImplementedError(
        "tapegrad.onnx.export: exporting to ONNX is not supported by tapegrad (there is no "
        "tracer or ONNX graph builder); save the weights with tapegrad.save(model.state_dict(), "
        "path) and export from PyTorch after loading them there")


def is_in_onnx_export():
    return False
