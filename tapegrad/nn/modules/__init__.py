"""`tapegrad.nn.modules`: the home of every layer class, one file per torch file
(`torch.nn.modules.linear.Linear` is `tapegrad.nn.modules.linear.Linear`, ...).
`tapegrad.nn` imports the public names from here."""
from .module import Module
from .container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from .linear import Bilinear, Identity, LazyLinear, Linear
from .conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d,
                   LazyConv1d, LazyConv2d, LazyConv3d, LazyConvTranspose1d,
                   LazyConvTranspose2d, LazyConvTranspose3d)
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,
                      AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d, AvgPool1d,
                      AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d, MaxPool1d,
                      MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d, MaxUnpool3d)
from .pooling import FractionalMaxPool2d, FractionalMaxPool3d
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,
                      ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                      ReflectionPad3d, ReplicationPad1d, ReplicationPad2d, ReplicationPad3d,
                      ZeroPad1d, ZeroPad2d, ZeroPad3d)
from .activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish,
                         Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish,
                         MultiheadAttention, PReLU, ReLU, ReLU6, RReLU, Sigmoid, SiLU,
                         Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign, Tanh,
                         Tanhshrink, Threshold)
from .batchnorm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d,
                        LazyBatchNorm2d, LazyBatchNorm3d, SyncBatchNorm)
from .instancenorm import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, LazyInstanceNorm1d,
                           LazyInstanceNorm2d, LazyInstanceNorm3d)
from .normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
from .dropout import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,
                      FeatureAlphaDropout)
from .sparse import Embedding, EmbeddingBag
from .rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from .loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss,
                   GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss,
                   MarginRankingLoss, MSELoss, MultiLabelSoftMarginLoss, MultiMarginLoss,
                   MultiLabelMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss, SoftMarginLoss,
                   TripletMarginLoss, TripletMarginWithDistanceLoss)
from .loss import CTCLoss, LinearCrossEntropyLoss
from .channelshuffle import ChannelShuffle
from .distance import CosineSimilarity, PairwiseDistance
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .flatten import Flatten, Unflatten
from .fold import Fold, Unfold

__all__ = [
    "Module",
    "ModuleDict", "ModuleList", "ParameterDict", "ParameterList", "Sequential",
    "Bilinear", "Identity", "LazyLinear", "Linear",
    "Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d",
    "LazyConv1d", "LazyConv2d", "LazyConv3d", "LazyConvTranspose1d", "LazyConvTranspose2d",
    "LazyConvTranspose3d",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d", "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d", "AdaptiveMaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d",
    "LPPool1d", "LPPool2d", "LPPool3d", "MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d",
    "MaxUnpool2d", "MaxUnpool3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d", "ConstantPad1d", "ConstantPad2d",
    "ConstantPad3d", "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d", "ZeroPad1d", "ZeroPad2d",
    "ZeroPad3d",
    "CELU", "ELU", "GELU", "GLU", "SELU", "Hardshrink", "Hardsigmoid", "Hardswish",
    "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "MultiheadAttention",
    "PReLU", "ReLU", "ReLU6", "RReLU", "Sigmoid", "SiLU", "Softmax", "Softmax2d", "Softmin",
    "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold",
    "BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "LazyBatchNorm1d", "LazyBatchNorm2d",
    "LazyBatchNorm3d", "SyncBatchNorm",
    "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LazyInstanceNorm1d",
    "LazyInstanceNorm2d", "LazyInstanceNorm3d",
    "GroupNorm", "LayerNorm", "LocalResponseNorm", "RMSNorm",
    "AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "FeatureAlphaDropout",
    "Embedding", "EmbeddingBag",
    "GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase",
    "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
    "TransformerEncoderLayer",
    "BCELoss", "BCEWithLogitsLoss", "CosineEmbeddingLoss", "CrossEntropyLoss",
    "GaussianNLLLoss", "HingeEmbeddingLoss", "HuberLoss", "KLDivLoss", "L1Loss",
    "MarginRankingLoss", "MSELoss", "MultiLabelSoftMarginLoss", "MultiMarginLoss", "NLLLoss",
    "PoissonNLLLoss", "SmoothL1Loss", "SoftMarginLoss", "TripletMarginLoss",
    "MultiLabelMarginLoss", "TripletMarginWithDistanceLoss", "ChannelShuffle",
    "CTCLoss", "LinearCrossEntropyLoss", "FractionalMaxPool2d", "FractionalMaxPool3d",
    "CosineSimilarity", "PairwiseDistance",
    "PixelShuffle", "PixelUnshuffle",
    "Upsample", "UpsamplingBilinear2d", "UpsamplingNearest2d",
    "Flatten", "Unflatten", "Fold", "Unfold",
]
