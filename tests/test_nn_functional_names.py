"""`tapegrad.nn.functional`'s namespace: exactly the public names listed here (each one
of torch.nn.functional's, none of our helpers: no `apply`, `Tensor`, `np`), one file per
section of torch's docs page, and the torch import paths of the layer classes."""
import importlib
import types

import torch
import torch.nn.functional as TF

import tapegrad as tg
import tapegrad.nn.functional as F

SECTIONS = {
    "convolution": ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                    "conv_transpose3d", "fold", "unfold"],
    "pooling": ["adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
                "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
                "avg_pool1d", "avg_pool2d", "avg_pool3d", "lp_pool1d", "lp_pool2d",
                "lp_pool3d", "max_pool1d", "max_pool2d", "max_pool3d", "max_unpool1d",
                "max_unpool2d", "max_unpool3d", "fractional_max_pool2d", "fractional_max_pool3d"],
    "attention": ["multi_head_attention_forward", "scaled_dot_product_attention"],
    "activation": ["celu", "celu_", "elu", "elu_", "gelu", "glu", "gumbel_softmax",
                   "hardshrink", "hardsigmoid", "hardswish", "hardtanh", "hardtanh_",
                   "leaky_relu", "leaky_relu_", "log_softmax", "logsigmoid", "mish", "prelu",
                   "relu", "relu6", "relu_", "rrelu", "rrelu_", "selu", "selu_", "sigmoid",
                   "silu", "softmax", "softmin", "softplus", "softshrink", "softsign", "tanh",
                   "tanhshrink", "threshold", "threshold_"],
    "normalization": ["batch_norm", "group_norm", "instance_norm", "layer_norm",
                      "local_response_norm", "normalize", "rms_norm"],
    "linear": ["bilinear", "linear"],
    "dropout": ["alpha_dropout", "dropout", "dropout1d", "dropout2d", "dropout3d",
                "feature_alpha_dropout"],
    "sparse": ["embedding", "embedding_bag", "one_hot"],
    "distance": ["cosine_similarity", "pairwise_distance", "pdist"],
    "loss": ["binary_cross_entropy", "binary_cross_entropy_with_logits",
             "cosine_embedding_loss", "cross_entropy", "gaussian_nll_loss",
             "hinge_embedding_loss", "huber_loss", "kl_div", "l1_loss", "margin_ranking_loss",
             "mse_loss", "multi_margin_loss", "multilabel_margin_loss",
             "multilabel_soft_margin_loss", "nll_loss", "poisson_nll_loss", "smooth_l1_loss",
             "soft_margin_loss", "triplet_margin_loss", "triplet_margin_with_distance_loss",
             "ctc_loss", "linear_cross_entropy"],
    "vision": ["channel_shuffle", "interpolate", "pad", "pixel_shuffle", "pixel_unshuffle",
               "upsample", "upsample_bilinear", "upsample_nearest", "affine_grid", "grid_sample"],
}
# torch's own names whose section file has the same name as a function (F.linear is the
# function; the file is reached as `tapegrad.nn.functional.linear` in sys.modules)
_FUNCTION_OVER_MODULE = {"linear", "dropout"}


def _public(mod):
    return {n for n in dir(mod) if not n.startswith("_")}


def test_dir_holds_exactly_the_listed_names():
    functions = {n for names in SECTIONS.values() for n in names}
    modules = {n for n in _public(F) if isinstance(getattr(F, n), types.ModuleType)}
    assert modules == set(SECTIONS) - _FUNCTION_OVER_MODULE
    assert _public(F) - modules == functions
    for leak in ("apply", "apply_saved", "Tensor", "np", "math", "warnings"):
        assert not hasattr(F, leak), leak


def test_every_public_name_is_torchs():
    for names in SECTIONS.values():
        for n in names:
            assert hasattr(TF, n), n
            assert callable(getattr(F, n)), n


def test_each_name_is_defined_or_named_in_its_section_file():
    for section, names in SECTIONS.items():
        mod = importlib.import_module(f"tapegrad.nn.functional.{section}")
        for n in names:
            assert getattr(mod, n) is getattr(F, n), (section, n)


def test_functions_carry_their_torch_names():
    for names in SECTIONS.values():
        for n in names:
            if n in ("one_hot", "pad", "cosine_similarity", "pairwise_distance"):
                continue  # ops re-exported under torch's names (their home is tapegrad/ops)
            f = getattr(F, n)
            assert f.__name__ == n and f.__qualname__ == n, (n, f.__qualname__)


def test_one_scaled_dot_product_attention():
    homes = [m for m in ("attention", "_fused_attention")
             if hasattr(importlib.import_module(f"tapegrad.nn.functional.{m}"),
                        "scaled_dot_product_attention")]
    assert homes == ["attention"]
    assert F.scaled_dot_product_attention.__module__ == "tapegrad.nn.functional.attention"


# torch.nn.modules.<file>: the class's home is the same file here
HOMES = {"module": ["Module"], "container": ["Sequential", "ModuleList", "ModuleDict",
                                            "ParameterList", "ParameterDict"],
         "linear": ["Identity", "Linear", "LazyLinear", "Bilinear"],
         "conv": ["Conv1d", "Conv2d", "ConvTranspose1d", "Conv3d", "ConvTranspose3d",
                  "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d",
                  "LazyConvTranspose2d", "LazyConvTranspose3d"],
         "pooling": ["MaxPool2d", "AdaptiveMaxPool2d", "AdaptiveAvgPool1d", "MaxPool3d",
                     "AvgPool3d", "AdaptiveAvgPool3d", "AdaptiveMaxPool3d", "LPPool1d",
                     "LPPool2d", "LPPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d"],
         "activation": ["ReLU", "GLU", "PReLU", "MultiheadAttention"],
         "normalization": ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"],
         "batchnorm": ["BatchNorm1d", "BatchNorm2d", "SyncBatchNorm", "BatchNorm3d",
                       "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d"],
         "instancenorm": ["InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d",
                          "LazyInstanceNorm1d", "LazyInstanceNorm2d", "LazyInstanceNorm3d"],
         "dropout": ["Dropout", "Dropout2d", "Dropout1d", "Dropout3d", "AlphaDropout",
                     "FeatureAlphaDropout"], "sparse": ["Embedding", "EmbeddingBag"],
         "rnn": ["RNNBase", "LSTM", "GRUCell", "RNNCellBase"],
         "transformer": ["Transformer", "TransformerEncoderLayer"],
         "loss": ["CrossEntropyLoss", "TripletMarginLoss", "_Loss", "_WeightedLoss",
                  "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss"],
         "channelshuffle": ["ChannelShuffle"],
         "distance": ["CosineSimilarity"], "padding": ["ReflectionPad2d"],
         "pixelshuffle": ["PixelShuffle"], "upsampling": ["Upsample"],
         "flatten": ["Flatten", "Unflatten"], "fold": ["Fold", "Unfold"]}


def test_layer_classes_live_where_torch_keeps_them():
    for file, names in HOMES.items():
        ours = importlib.import_module(f"tapegrad.nn.modules.{file}")
        theirs = importlib.import_module(f"torch.nn.modules.{file}")
        for n in names:
            assert hasattr(theirs, n), (file, n)
            cls = getattr(ours, n)
            assert cls.__module__ == f"tapegrad.nn.modules.{file}", (file, n, cls.__module__)
            if not n.startswith("_"):
                assert getattr(tg.nn, n) is cls and n in ours.__all__, (file, n)
                assert getattr(torch.nn, n) is getattr(theirs, n)
