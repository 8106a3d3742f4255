"""`tapegrad.nn.functional` (import as `F`): the stateless forms of the layers and losses.

One file per section of torch's `torch.nn.functional` docs page; each function checks
its arguments the way PyTorch does, then calls a table entry (fused kernels in
`tapegrad/ops/rules/nn.py` and `ops/rules/conv.py`, elementwise ops) or composes existing
ops. Names, arguments and defaults are PyTorch's. Every public name here is one of
torch.nn.functional's (tests/test_nn_functional_names.py).
"""
from .convolution import (conv1d, conv2d, conv3d, conv_transpose1d, conv_transpose2d,
                          conv_transpose3d, fold, unfold)
from .pooling import (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d,
                      adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d,
                      avg_pool1d, avg_pool2d, avg_pool3d, lp_pool1d, lp_pool2d, lp_pool3d,
                      max_pool1d, max_pool2d, max_pool3d, max_unpool1d, max_unpool2d,
                      max_unpool3d)
from .pooling import fractional_max_pool2d, fractional_max_pool3d
from .attention import multi_head_attention_forward, scaled_dot_product_attention
from .activation import (celu, celu_, elu, elu_, gelu, glu, gumbel_softmax, hardshrink,
                         hardsigmoid, hardswish, hardtanh, hardtanh_, leaky_relu, leaky_relu_,
                         log_softmax, logsigmoid, mish, prelu, relu, relu6, relu_, rrelu,
                         rrelu_, selu, selu_, sigmoid, silu, softmax, softmin, softplus,
                         softshrink, softsign, tanh, tanhshrink, threshold, threshold_)
from .normalization import (batch_norm, group_norm, instance_norm, layer_norm,
                            local_response_norm, normalize, rms_norm)
from .linear import bilinear, linear
from .dropout import (alpha_dropout, dropout, dropout1d, dropout2d, dropout3d,
                      feature_alpha_dropout)
from .sparse import embedding, embedding_bag, one_hot
from .distance import cosine_similarity, pairwise_distance, pdist
from .loss import (binary_cross_entropy, binary_cross_entropy_with_logits,
                   cosine_embedding_loss, cross_entropy, gaussian_nll_loss,
                   hinge_embedding_loss, huber_loss, kl_div, l1_loss, margin_ranking_loss,
                   mse_loss, multi_margin_loss, multilabel_margin_loss,
                   multilabel_soft_margin_loss, nll_loss, poisson_nll_loss, smooth_l1_loss,
                   soft_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss)
from .loss import ctc_loss, linear_cross_entropy
from .vision import (channel_shuffle, interpolate, pad, pixel_shuffle, pixel_unshuffle,
                     upsample, upsample_bilinear, upsample_nearest)
from .vision import affine_grid, grid_sample
