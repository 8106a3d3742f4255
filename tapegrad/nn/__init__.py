"""`tapegrad.nn`: Module, Parameter, layers, losses, `functional` and `init`.

Names, arguments, defaults and initialisations are PyTorch's, so that a model written
for `torch.nn` runs after changing its import.
"""
from . import functional, init
from .activation import (ELU, GELU, Hardtanh, LeakyReLU, LogSoftmax, ReLU, ReLU6, Sigmoid, SiLU,
                         Softmax, Softplus, Tanh)
from .containers import ModuleDict, ModuleList, Sequential
from .conv import Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d
from .dropout import Dropout
from .flatten import Flatten, Unflatten
from .linear import Identity, Linear
from .loss import (BCELoss, BCEWithLogitsLoss, CrossEntropyLoss, HuberLoss, KLDivLoss, L1Loss,
                   MSELoss, NLLLoss, SmoothL1Loss)
from .module import Module
from .normalization import BatchNorm1d, LayerNorm
from .norm2d import BatchNorm2d, Dropout2d
from .parameter import Buffer, Parameter
from .rnn import GRU, LSTM, RNN, RNNBase
from .rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase
from .pooling import (AdaptiveAvgPool1d, AdaptiveAvgPool2d, AvgPool1d, AvgPool2d, MaxPool1d,
                      MaxPool2d)
from .sparse import Embedding

try:  # tg.nn.utils (clip_grad_norm_, ...) lives with the optimizers
    from . import utils  # noqa: F401
except ImportError:  # pragma: no cover
    pass
from .multihead import MultiheadAttention
from .transformer import (Transformer, TransformerDecoder, TransformerDecoderLayer,
                          TransformerEncoder, TransformerEncoderLayer)
from .groupnorm import GroupNorm
from .upsample import Upsample, UpsamplingBilinear2d, UpsamplingNearest2d
from .pixelshuffle import PixelShuffle, PixelUnshuffle
from .parameter_containers import ParameterDict, ParameterList
from .parallel import DataParallel
from . import parallel  # noqa: F401  (torch.nn.parallel)
from .sync_batchnorm import SyncBatchNorm
from . import modules  # noqa: F401  (torch.nn.modules.* import paths)
from .activation2 import (CELU, GLU, SELU, Hardshrink, Hardsigmoid, Hardswish, LogSigmoid,
                          Mish, PReLU, RReLU, Softmax2d, Softmin, Softshrink, Softsign,
                          Tanhshrink, Threshold)
from .rmsnorm import RMSNorm
from .distance import CosineSimilarity, PairwiseDistance
from .padding import (CircularPad1d, CircularPad2d, CircularPad3d, ConstantPad1d, ConstantPad2d,
                      ConstantPad3d, ReflectionPad1d, ReflectionPad2d, ReflectionPad3d,
                      ReplicationPad1d, ReplicationPad2d, ReplicationPad3d, ZeroPad1d, ZeroPad2d,
                      ZeroPad3d)
from .loss2 import (CosineEmbeddingLoss, GaussianNLLLoss, HingeEmbeddingLoss, MarginRankingLoss,
                    MultiLabelSoftMarginLoss, MultiMarginLoss, PoissonNLLLoss, SoftMarginLoss,
                    TripletMarginLoss)
from .instancenorm import InstanceNorm1d, InstanceNorm2d
from .adaptive_max_pool import AdaptiveMaxPool1d, AdaptiveMaxPool2d
