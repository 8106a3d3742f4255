"""torch.nn's import paths: the names of torch.nn.modules.* (loss, pooling, padding,
instancenorm, ...), nn.parallel and onnx importable from the same paths, the loss base
classes, and the import lines of real programs.
"""
import importlib
import pytest
import torch

import tapegrad as tg


# ---- import paths ----------------------------------------------------------------------------
@pytest.mark.parametrize("path,names", [
    ("module", ["Module"]), ("linear", ["Linear", "Identity"]), ("loss", ["CrossEntropyLoss"]),
    ("activation", ["ReLU", "GELU", "MultiheadAttention"]),
    ("container", ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"]),
    ("conv", ["Conv2d"]), ("batchnorm", ["BatchNorm1d", "BatchNorm2d"]),
    ("normalization", ["LayerNorm", "GroupNorm"]), ("dropout", ["Dropout"]),
    ("sparse", ["Embedding"]), ("transformer", ["Transformer", "TransformerEncoderLayer"]),
    ("pooling", ["MaxPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d"]),
    ("flatten", ["Flatten", "Unflatten"]), ("upsampling", ["Upsample"]),
    ("loss", ["TripletMarginLoss", "MarginRankingLoss", "GaussianNLLLoss", "MultiMarginLoss"]),
    ("padding", ["ZeroPad2d", "ConstantPad1d", "ReflectionPad2d", "ReplicationPad1d"]),
    ("instancenorm", ["InstanceNorm1d", "InstanceNorm2d"]),
    ("distance", ["CosineSimilarity", "PairwiseDistance"]),
    ("normalization", ["RMSNorm"]), ("activation", ["PReLU", "Mish", "GLU"])])
def test_nn_modules_import_paths_like_torch(path, names):
    ours = importlib.import_module(f"tapegrad.nn.modules.{path}")
    theirs = importlib.import_module(f"torch.nn.modules.{path}")
    for n in names:
        assert hasattr(theirs, n)                                # the path is torch's
        assert getattr(ours, n) is getattr(tg.nn, n)
        assert getattr(tg.nn.modules, n) is getattr(tg.nn, n)


def test_loss_bases_importable_like_torch():
    from tapegrad.nn.modules.loss import _Loss, _WeightedLoss
    from torch.nn.modules.loss import _Loss as T_Loss, _WeightedLoss as T_WeightedLoss
    assert issubclass(tg.nn.MSELoss, _Loss) and issubclass(torch.nn.MSELoss, T_Loss)
    assert (issubclass(tg.nn.CrossEntropyLoss, _WeightedLoss)
            and issubclass(torch.nn.CrossEntropyLoss, T_WeightedLoss))


def test_program_style_imports():
    from tapegrad.nn.modules.module import Module  # noqa: F401
    from tapegrad.nn.parallel import DataParallel  # noqa: F401
    import tapegrad.onnx
    assert tg.nn.modules.module.Module is tg.nn.Module
    with pytest.raises(NotImplementedError, match="ONNX is not supported by tapegrad"):
        tapegrad.onnx.export(tg.nn.Linear(2, 2), (tg.randn(1, 2),), "model.onnx")
