"""`tapegrad.nn`: Module, Parameter, layers, losses, `functional` and `init`.

Names, arguments, defaults and initialisations are PyTorch's, so that a model written
for `torch.nn` runs after changing its import. Every layer lives in `nn/modules/<the
file torch keeps it in>`; this file names each one from there, grouped by family.
"""
from . import functional, init
from .parameter import Buffer, Parameter, UninitializedBuffer, UninitializedParameter
try:  # tg.nn.utils (clip_grad_norm_, ...) lives with the optimizers
    from . import utils  # noqa: F401
except ImportError:  # pragma: no cover
    pass
from . import modules  # noqa: F401  (torch.nn.modules.* import paths)
# the base class and the containers
from .modules.module import Module
from .modules.container import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
# linear, convolution, pooling, padding
from .modules.linear import Bilinear, Identity, LazyLinear, Linear
from .modules.conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                           ConvTranspose3d, LazyConv1d, LazyConv2d, LazyConv3d,
                           LazyConvTranspose1d, LazyConvTranspose2d, LazyConvTranspose3d)
from .modules.pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AdaptiveAvgPool3d,
                              AdaptiveMaxPool1d, AdaptiveMaxPool2d, AdaptiveMaxPool3d,
                              AvgPool1d, AvgPool2d, AvgPool3d, LPPool1d, LPPool2d, LPPool3d,
                              MaxPool1d, MaxPool2d, MaxPool3d, MaxUnpool1d, MaxUnpool2d,
                              MaxUnpool3d)
from .modules.pooling import FractionalMaxPool2d, FractionalMaxPool3d
from .modules.padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d,
                              ConstantPad2d, ConstantPad3d, ReflectionPad1d, ReflectionPad2d,
                              ReflectionPad3d, ReplicationPad1d, ReplicationPad2d,
                              ReplicationPad3d, ZeroPad1d, ZeroPad2d, ZeroPad3d)
# activations (and MultiheadAttention, which torch keeps with them)
from .modules.activation import (CELU, ELU, GELU, GLU, SELU, Hardshrink, Hardsigmoid,
                                 Hardswish, Hardtanh, LeakyReLU, LogSigmoid, LogSoftmax, Mish,
                                 MultiheadAttention, PReLU, ReLU, ReLU6, RReLU, Sigmoid, SiLU,
                                 Softmax, Softmax2d, Softmin, Softplus, Softshrink, Softsign,
                                 Tanh, Tanhshrink, Threshold)
# normalization
from .modules.batchnorm import (BatchNorm1d, BatchNorm2d, BatchNorm3d, LazyBatchNorm1d,
                                LazyBatchNorm2d, LazyBatchNorm3d, SyncBatchNorm)
from .modules.instancenorm import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                                   LazyInstanceNorm1d, LazyInstanceNorm2d, LazyInstanceNorm3d)
from .modules.normalization import GroupNorm, LayerNorm, LocalResponseNorm, RMSNorm
# dropout, embedding
from .modules.dropout import (AlphaDropout, Dropout, Dropout1d, Dropout2d, Dropout3d,
                              FeatureAlphaDropout)
from .modules.sparse import Embedding, EmbeddingBag
# recurrent and transformer layers
from .modules.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from .modules.transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                                  TransformerEncoder, TransformerEncoderLayer)
# losses
from .modules.loss import (BCELoss, BCEWithLogitsLoss, CosineEmbeddingLoss, CrossEntropyLoss,
                           GaussianNLLLoss, HingeEmbeddingLoss, HuberLoss, KLDivLoss, L1Loss,
                           MarginRankingLoss, MSELoss, MultiLabelSoftMarginLoss,
                           MultiMarginLoss, NLLLoss, PoissonNLLLoss, SmoothL1Loss,
                           SoftMarginLoss, TripletMarginLoss, MultiLabelMarginLoss,
                           TripletMarginWithDistanceLoss)
from .modules.loss import CTCLoss, LinearCrossEntropyLoss
# distances, vision, shape
from .modules.distance import CosineSimilarity, PairwiseDistance
from .modules.pixelshuffle import PixelShuffle, PixelUnshuffle
from .modules.channelshuffle import ChannelShuffle
from .modules.upsampling import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .modules.flatten import Flatten, Unflatten
from .modules.fold import Fold, Unfold
# multi-process training
from . import parallel  # noqa: F401  (torch.nn.parallel)
from .parallel import DataParallel
