"""Op-database entries for the convolution and pooling kernels (tapegrad/ops/rules/conv.py).

Each entry runs the PUBLIC function (`tg.nn.functional.X` vs `torch.nn.functional.X`).
The gradient ops (`conv2d_input_grad`, `conv2d_weight_grad`, the pooling adjoints and
the max-pool scatter/gather) are the rules' own table entries: the second-order tests
(grad of grad vs torch, gradgradcheck) run through them, so they are listed in `covers`.
Samples are small (gradgradcheck builds full Jacobians); the larger and randomized
cases live in tests/test_conv.py and tests/test_pooling.py.
"""
import numpy as np

from _opinfo import SEPARATED, Sample, op

F32 = (1e-4, 1e-5)   # float32: sums of up to ~50 products per output


def _F(lib):
    return lib.nn.functional


def _conv2d_samples(rng, info):
    r = rng.standard_normal
    return [
        Sample((r((2, 2, 5, 6)), r((3, 2, 3, 3)), r((3,))), note="basic"),
        Sample((r((1, 4, 6, 5)), r((4, 2, 2, 3)), None),
               dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2), note="strided"),
        Sample((r((1, 2, 5, 5)), r((2, 2, 2, 2)), r((2,))), dict(padding="same"),
               note="same-even-kernel"),
        Sample((r((2, 3, 4, 4)), r((3, 1, 3, 3)), r((3,))), dict(padding=1, groups=3),
               note="depthwise"),
    ]


def _conv1d_samples(rng, info):
    r = rng.standard_normal
    return [Sample((r((2, 2, 7)), r((4, 1, 3)), r((4,))),
                   dict(stride=2, padding=1, dilation=2, groups=2))]


def _convt_samples(rng, info):
    r = rng.standard_normal
    return [Sample((r((1, 4, 3, 4)), r((4, 1, 3, 2)), r((2,))),
                   dict(stride=2, padding=1, output_padding=1, groups=2), note="strided"),
            Sample((r((2, 2, 3, 3)), r((2, 3, 2, 2)), None), dict(dilation=2), note="dilated")]


def _max_samples(rng, info):
    sep = SEPARATED.sample
    ties = rng.integers(0, 3, (1, 2, 5, 6)).astype(np.float64)
    return [
        Sample((sep(rng, (2, 2, 4, 6)),), dict(kernel_size=2), note="2x2"),
        Sample((sep(rng, (1, 2, 5, 7)),), dict(kernel_size=3, stride=2, padding=1,
                                               ceil_mode=True), note="overlap-ceil"),
        Sample((sep(rng, (1, 1, 6, 6)),), dict(kernel_size=(2, 3), stride=1, dilation=(2, 1)),
               note="dilated"),
        Sample((ties,), dict(kernel_size=3, stride=1, padding=1), gradcheck=False,
               note="ties"),
    ]


def _avg_samples(rng, info):
    r = rng.standard_normal
    return [
        Sample((r((2, 2, 4, 6)),), dict(kernel_size=2), note="2x2"),
        Sample((r((1, 2, 5, 7)),), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
               note="pad-ceil"),
        Sample((r((1, 2, 5, 7)),), dict(kernel_size=3, stride=2, padding=1, ceil_mode=True,
                                        count_include_pad=False), note="exclude-pad"),
        Sample((r((1, 1, 5, 5)),), dict(kernel_size=(2, 3), stride=(1, 2), divisor_override=4),
               note="divisor"),
    ]


def _adaptive_samples(rng, info):
    r = rng.standard_normal
    return [Sample((r((2, 2, 5, 7)), (3, 2)), note="uneven"),
            Sample((r((1, 3, 4, 4)), 1), note="global"),
            Sample((r((1, 1, 3, 3)), (4, 5)), note="upsampling")]


def _unfold_samples(rng, info):
    r = rng.standard_normal
    return [Sample((r((1, 2, 5, 6)),), dict(kernel_size=(2, 3), dilation=(2, 1), padding=1,
                                            stride=(1, 2)))]


def _fold_samples(rng, info):
    r = rng.standard_normal
    # (1, 2*2*3, L) columns for a 5x6 image, kernel (2, 3), padding 1, stride (1, 2):
    # 6 x 3 = 18 windows
    return [Sample((r((1, 12, 18)),), dict(output_size=(5, 6), kernel_size=(2, 3), padding=1,
                                          stride=(1, 2)))]


ENTRIES = [
    op("conv2d", lambda lib, x, w, b, **kw: _F(lib).conv2d(x, w, b, **kw), _conv2d_samples,
       covers=("conv2d_input_grad", "conv2d_weight_grad"), f32_tol=F32),
    op("conv2d", lambda lib, x, w, b, **kw: _F(lib).conv1d(x, w, b, **kw), _conv1d_samples,
       variant="conv1d", f32_tol=F32),
    op("conv2d_input_grad", lambda lib, x, w, b, **kw: _F(lib).conv_transpose2d(x, w, b, **kw),
       _convt_samples, variant="conv_transpose2d", f32_tol=F32),
    op("max_pool2d", lambda lib, x, **kw: _F(lib).max_pool2d(x, **kw), _max_samples,
       domain=SEPARATED, covers=("max_pool2d_scatter", "max_pool2d_gather")),
    op("avg_pool2d", lambda lib, x, **kw: _F(lib).avg_pool2d(x, **kw), _avg_samples,
       covers=("avg_pool2d_adjoint",)),
    op("adaptive_avg_pool2d", lambda lib, x, size: _F(lib).adaptive_avg_pool2d(x, size),
       _adaptive_samples, covers=("adaptive_avg_pool2d_adjoint",)),
    op("unfold", lambda lib, x, **kw: _F(lib).unfold(x, **kw), _unfold_samples),
    op("fold", lambda lib, x, **kw: _F(lib).fold(x, **kw), _fold_samples),
]
