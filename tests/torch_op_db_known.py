"""Known failures of the op_db conformance suite (tests/test_torch_op_db.py), each
with its reason: what tapegrad does differently from torch on torch's own samples.

Keys are "<op_db entry>:<kind>" (kind: fwd, bwd, err). An entry listed here is an expected
failure; its test fails once the entry passes, so the list only shrinks. Every line is a
defect to fix (issue "Correct wherever torch is correct"); none is a design decision.
"""

KNOWN = {
    "addbmm:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (6 samples); result dtype differs (torch.int64 #2: output 0: dtype float32, torch int64)",
    "addcdiv:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (10 samples)",
    "addcmul:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (9 samples)",
    "addmm.decomposed:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples)",
    "addmv:fwd":
        "result dtype differs (torch.int64 #1: output 0: dtype float32, torch int64)",
    "addr:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (2 samples); result dtype differs (torch.bool #2: output 0: dtype int64, torch bool)",
    "all:fwd":
        "result dtype differs (torch.uint8 #0: output 0: dtype bool, torch uint8)",
    "amax:err":
        "another exception type than torch (#0: raised ValueError, torch RuntimeError)",
    "amin:err":
        "another exception type than torch (#0: raised ValueError, torch RuntimeError)",
    "aminmax:err":
        "another exception type than torch (#1: raised ValueError, torch RuntimeError)",
    "any:fwd":
        "result dtype differs (torch.uint8 #0: output 0: dtype bool, torch uint8)",
    "arange:err":
        "accepts 3 inputs torch refuses (#1: did not raise (torch: RuntimeError)); another exception type than torch (#4: raised ValueError, torch RuntimeError)",
    "arange:fwd":
        "wrong values (9 samples; first torch.int64 #18: output 0: values differ); result shape differs (torch.int64 #10: output 0: shape (3,), torch (2,))",
    "argsort:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples); wrong values (3 samples; first torch.int8 #0: output 0: values differ)",
    "as_strided.partial_views:bwd":
        "wrong values (1 samples; first #1: grad of input 0: output 0: values differ (max abs diff 0.661)); refuses 1 samples torch accepts (#2: forward raised RuntimeError: setStorage: sizes [2, 2], strides [1, 2], storage offset 10, and it)",
    "as_strided.partial_views:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples); wrong values (8 samples; first torch.float64 #1: output 0: values differ (max abs diff 4.18)); refuses 9 samples torch accepts (torch.float64 #2: raised RuntimeError: setStorage: sizes [2, 2], strides [1, 2], storage offset 10, )",
    "baddbmm:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (6 samples); result dtype differs (torch.int64 #2: output 0: dtype float32, torch int64)",
    "bernoulli:err":
        "another exception type than torch (#0: raised TypeError, torch RuntimeError)",
    "bfloat16:bwd":
        "refuses 2 samples torch accepts (#0: forward raised AttributeError: 'Tensor' object has no attribute 'bfloat16')",
    "bfloat16:fwd":
        "refuses 18 samples torch accepts (torch.float64 #0: raised AttributeError: 'Tensor' object has no attribute 'bfloat16')",
    "cat:err":
        "accepts 5 inputs torch refuses (#0: did not raise (torch: RuntimeError))",
    "clamp_max:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: Exception))",
    "clamp_min:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: Exception))",
    "cumprod:fwd":
        "result dtype differs (torch.int32 #9: output 0: dtype int64, torch int32)",
    "cumsum:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (3 samples); result dtype differs (torch.int32 #3: output 0: dtype int64, torch int32)",
    "diff:bwd":
        "refuses 5 samples torch accepts (#22: backward raised RuntimeError: Mismatch in shape: grad_output has a shape of (5, 5) and output h)",
    "diff:fwd":
        "result shape differs (torch.float64 #22: output 0: shape (8, 5), torch (5, 5))",
    "div.floor_rounding:bwd":
        "refuses 9 samples torch accepts (#0: forward raised TypeError: _binary.<locals>.f() got an unexpected keyword argument 'rounding_mode)",
    "div.floor_rounding:fwd":
        "refuses 72 samples torch accepts (torch.float64 #0: raised TypeError: _binary.<locals>.f() got an unexpected keyword argument 'roundin)",
    "div.trunc_rounding:bwd":
        "refuses 9 samples torch accepts (#0: forward raised TypeError: _binary.<locals>.f() got an unexpected keyword argument 'rounding_mode)",
    "div.trunc_rounding:fwd":
        "refuses 72 samples torch accepts (torch.float64 #0: raised TypeError: _binary.<locals>.f() got an unexpected keyword argument 'roundin)",
    "einsum:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples); result dtype differs (torch.int32 #0: output 0: dtype int32, torch int64)",
    "eq:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: Exception))",
    "exp2:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples)",
    "eye:err":
        "another exception type than torch (#0: raised ValueError, torch RuntimeError)",
    "flip:bwd":
        "refuses 10 samples torch accepts (#0: forward raised TypeError: flip() got an unexpected keyword argument 'dims')",
    "flip:fwd":
        "refuses 90 samples torch accepts (torch.float64 #0: raised TypeError: flip() got an unexpected keyword argument 'dims')",
    "fmod:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: Exception))",
    "full_like:fwd":
        "refuses 1 samples torch accepts (torch.uint8 #7: raised OverflowError: Python integer -9 out of bounds for uint8)",
    "gather:bwd":
        "refuses 1 samples torch accepts (#4: forward raised RuntimeError: Index tensor must have the same number of dimensions as input tenso)",
    "gather:err":
        "accepts 4 inputs torch refuses (#1: did not raise (torch: RuntimeError))",
    "gather:fwd":
        "refuses 9 samples torch accepts (torch.float64 #4: raised RuntimeError: Index tensor must have the same number of dimensions as input)",
    "ge:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: Exception))",
    "gt:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: Exception))",
    "histogram:fwd":
        "wrong values (34 samples; first torch.float64 #160: output 1: values differ (max abs diff 0.5))",
    "hstack:err":
        "another exception type than torch (#1: raised ValueError, torch RuntimeError)",
    "index_add:bwd":
        "refuses 3 samples torch accepts (#0: forward raised RuntimeError: index_add_(): Source/destination tensor must have same slice shapes)",
    "index_add:fwd":
        "refuses 28 samples torch accepts (torch.float64 #0: raised RuntimeError: index_add_(): Source/destination tensor must have same slice )",
    "index_select:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: RuntimeError))",
    "isclose:err":
        "accepts 3 inputs torch refuses (#0: did not raise (torch: RuntimeError))",
    "kthvalue:bwd":
        "refuses 3 samples torch accepts (#7: forward raised IndexError: too many indices for array: array is 0-dimensional, but 1 were indexe)",
    "kthvalue:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: RuntimeError))",
    "kthvalue:fwd":
        "wrong values (27 samples; first torch.int64 #0: output 1: values differ); refuses 24 samples torch accepts (torch.float64 #7: raised IndexError: too many indices for array: array is 0-dimensional, but 1 were )",
    "le:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: Exception))",
    "lerp:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (11 samples)",
    "linalg.norm.subgradients_at_zero:fwd":
        "refuses 36 samples torch accepts (torch.float64 #56: raised ValueError: zero-size array to reduction operation maximum which has no id)",
    "linalg.norm:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (2 samples); refuses 36 samples torch accepts (torch.float64 #68: raised ValueError: zero-size array to reduction operation maximum which has no id)",
    "linalg.pinv.hermitian:bwd":
        "wrong values (3 samples; first #0: grad of input 0: output 0: values differ (max abs diff 3.85))",
    "linalg.pinv.hermitian:fwd":
        "wrong values (6 samples; first torch.float64 #0: output 0: values differ (max abs diff 1.01))",
    "linalg.pinv.singular:bwd":
        "wrong values (15 samples; first #2: grad of input 0: output 0: values differ (max abs diff 0.083))",
    "linalg.slogdet:bwd":
        "refuses 9 samples torch accepts (#0: backward raised RuntimeError: element 0 of tensors does not require grad and does not have a gra)",
    "linspace.tensor_overload:err":
        "accepts 2 inputs torch refuses (#1: did not raise (torch: TypeError)); another exception type than torch (#0: raised ValueError, torch RuntimeError)",
    "linspace.tensor_overload:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (15 samples); wrong values (59 samples; first torch.float64 #97: output 0: values differ (max abs diff 5.45e-07))",
    "linspace:err":
        "accepts 2 inputs torch refuses (#1: did not raise (torch: TypeError)); another exception type than torch (#0: raised ValueError, torch RuntimeError)",
    "linspace:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (5 samples); wrong values (19 samples; first torch.int64 #32: output 0: values differ)",
    "log_softmax:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (5 samples)",
    "logaddexp:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (2 samples)",
    "logical_and:err":
        "accepts 2 inputs torch refuses (#0: did not raise (torch: Exception))",
    "logical_or:err":
        "accepts 2 inputs torch refuses (#0: did not raise (torch: Exception))",
    "logical_xor:err":
        "accepts 2 inputs torch refuses (#0: did not raise (torch: Exception))",
    "logit:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (2 samples)",
    "logspace.tensor_overload:err":
        "accepts 1 inputs torch refuses (#1: did not raise (torch: TypeError))",
    "logspace.tensor_overload:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (30 samples); wrong values (1053 samples; first torch.int64 #39: output 0: values differ)",
    "logspace:err":
        "accepts 1 inputs torch refuses (#1: did not raise (torch: TypeError))",
    "logspace:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (10 samples); wrong values (351 samples; first torch.int64 #13: output 0: values differ)",
    "logsumexp:bwd":
        "refuses 3 samples torch accepts (#0: forward raised AxisError: axis 0 is out of bounds for array of dimension 0)",
    "logsumexp:fwd":
        "refuses 33 samples torch accepts (torch.float64 #0: raised AxisError: axis 0 is out of bounds for array of dimension 0)",
    "lt:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: Exception))",
    "masked_fill:err":
        "accepts 1 inputs torch refuses (#1: did not raise (torch: RuntimeError))",
    "masked_select:err":
        "accepts 3 inputs torch refuses (#0: did not raise (torch: RuntimeError))",
    "matmul:fwd":
        "wrong values (1 samples; first torch.float32 #13: output 0: values differ (max abs diff 3.05e-05))",
    "movedim:err":
        "accepts 1 inputs torch refuses (#3: did not raise (torch: RuntimeError))",
    "multinomial:err":
        "another exception type than torch (#2: raised TypeError, torch RuntimeError)",
    "nanmean:bwd":
        "refuses 2 samples torch accepts (#2: forward raised AxisError: axis 0 is out of bounds for array of dimension 0)",
    "nanmean:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples); refuses 6 samples torch accepts (torch.float64 #2: raised AxisError: axis 0 is out of bounds for array of dimension 0)",
    "nanquantile:bwd":
        "wrong values (12 samples; first #37: grad of input 1: output 0: values differ (max abs diff 2.74))",
    "narrow:err":
        "accepts 1 inputs torch refuses (#8: did not raise (torch: RuntimeError))",
    "ne:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: Exception))",
    "neg:err":
        "another exception type than torch (#0: raised TypeError, torch RuntimeError)",
    "nn.functional.adaptive_avg_pool1d:err":
        "another exception type than torch (#0: raised ValueError, torch RuntimeError)",
    "nn.functional.adaptive_avg_pool2d:err":
        "another exception type than torch (#0: raised RuntimeError, torch ValueError)",
    "nn.functional.adaptive_max_pool1d:err":
        "accepts 1 inputs torch refuses (#1: did not raise (torch: RuntimeError))",
    "nn.functional.adaptive_max_pool2d:err":
        "another exception type than torch (#0: raised RuntimeError, torch ValueError)",
    "nn.functional.avg_pool1d:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (5 samples); refuses 9 samples torch accepts (torch.int64 #0: raised UFuncTypeError: Cannot cast ufunc 'divide' output from dtype('float64') to dt)",
    "nn.functional.avg_pool2d:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (6 samples); refuses 7 samples torch accepts (torch.int64 #0: raised UFuncTypeError: Cannot cast ufunc 'divide' output from dtype('float64') to dt)",
    "nn.functional.batch_norm:bwd":
        "refuses 2 samples torch accepts (#3: forward raised ValueError: expected 2D or higher input (got 1D input))",
    "nn.functional.batch_norm:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (4 samples); refuses 6 samples torch accepts (torch.float64 #3: raised ValueError: expected 2D or higher input (got 1D input))",
    "nn.functional.bilinear:bwd":
        "refuses 16 samples torch accepts (#0: forward raised NotImplementedError: bilinear is not implemented in tapegrad)",
    "nn.functional.bilinear:fwd":
        "refuses 128 samples torch accepts (torch.float64 #0: raised NotImplementedError: bilinear is not implemented in tapegrad)",
    "nn.functional.conv1d:err":
        "another exception type than torch (#0: raised UFuncTypeError, torch RuntimeError)",
    "nn.functional.conv2d:err":
        "another exception type than torch (#0: raised UFuncTypeError, torch RuntimeError)",
    "nn.functional.conv_transpose1d:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (6 samples)",
    "nn.functional.conv_transpose2d:bwd":
        "refuses 2 samples torch accepts (#2: forward raised RuntimeError: conv_transpose2d: output padding must be smaller than the stride, g)",
    "nn.functional.conv_transpose2d:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (10 samples); refuses 8 samples torch accepts (torch.float64 #2: raised RuntimeError: conv_transpose2d: output padding must be smaller than the str)",
    "nn.functional.dropout2d:bwd":
        "wrong values (3 samples; first #2: grad of input 0: output 0: values differ (max abs diff 4.38))",
    "nn.functional.dropout:bwd":
        "wrong values (3 samples; first #2: grad of input 0: output 0: values differ (max abs diff 4.01))",
    "nn.functional.embedding:err":
        "accepts 1 inputs torch refuses (#1: did not raise (torch: RuntimeError)); another exception type than torch (#0: raised IndexError, torch RuntimeError)",
    "nn.functional.embedding:fwd":
        "refuses 15 samples torch accepts (torch.float64 #5: raised NotImplementedError: embedding: max_norm is not supported by tapegrad)",
    "nn.functional.group_norm:bwd":
        "result shape differs (#12: forward raised RuntimeError: shape '[0, 1, -1]' is invalid for input of size 0); refuses 4 samples torch accepts (#12: forward raised RuntimeError: shape '[0, 1, -1]' is invalid for input of size 0)",
    "nn.functional.group_norm:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (13 samples); result shape differs (torch.float64 #12: raised RuntimeError: shape '[0, 1, -1]' is invalid for input of size 0); refuses 12 samples torch accepts (torch.float64 #12: raised RuntimeError: shape '[0, 1, -1]' is invalid for input of size 0)",
    "nn.functional.hardtanh:err":
        "accepts 1 inputs torch refuses (#0: did not raise (torch: ValueError))",
    "nn.functional.hardtanh:fwd":
        "result dtype differs (torch.int64 #0: output 0: dtype float32, torch int64)",
    "nn.functional.huber_loss:err":
        "accepts 2 inputs torch refuses (#1: did not raise (torch: RuntimeError))",
    "nn.functional.huber_loss:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (3 samples)",
    "nn.functional.instance_norm:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (8 samples)",
    "nn.functional.interpolate.area:bwd":
        "refuses 22 samples torch accepts (#0: forward raised NotImplementedError: interpolate: mode='area' is not supported by tapegrad (use F)",
    "nn.functional.interpolate.area:fwd":
        "refuses 66 samples torch accepts (torch.float64 #0: raised NotImplementedError: interpolate: mode='area' is not supported by tapegrad )",
    "nn.functional.interpolate.bicubic:bwd":
        "refuses 24 samples torch accepts (#0: forward raised NotImplementedError: interpolate: mode='bicubic' is not supported by tapegrad)",
    "nn.functional.interpolate.bicubic:fwd":
        "refuses 92 samples torch accepts (torch.float64 #0: raised NotImplementedError: interpolate: mode='bicubic' is not supported by tapegr)",
    "nn.functional.interpolate.bilinear:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (22 samples); wrong values (18 samples; first torch.uint8 #0: output 0: values differ)",
    "nn.functional.interpolate.linear:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (8 samples)",
    "nn.functional.interpolate.trilinear:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (22 samples)",
    "nn.functional.max_pool1d:bwd":
        "refuses 864 samples torch accepts (#0: forward raised TypeError: max_pool1d() got an unexpected keyword argument 'return_indices')",
    "nn.functional.max_pool1d:err":
        "accepts 2 inputs torch refuses (#5: did not raise (torch: RuntimeError)); another exception type than torch (#0: raised TypeError, torch RuntimeError)",
    "nn.functional.max_pool1d:fwd":
        "refuses 2592 samples torch accepts (torch.float64 #0: raised TypeError: max_pool1d() got an unexpected keyword argument 'return_indices')",
    "nn.functional.max_pool2d:fwd":
        "wrong values (1452 samples; first torch.int16 #4: output 0: values differ)",
    "nn.functional.multilabel_soft_margin_loss:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples)",
    "nn.functional.nll_loss:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (3 samples)",
    "nn.functional.pad.circular:bwd":
        "wrong values (1 samples; first #7: grad of input 0: output 0: values differ (max abs diff 1.99))",
    "nn.functional.pad.circular:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples); wrong values (7 samples; first torch.float64 #7: output 0: values differ (max abs diff 15))",
    "nn.functional.relu6:fwd":
        "result dtype differs (torch.int64 #0: output 0: dtype float32, torch int64)",
    "nn.functional.rrelu:bwd":
        "wrong values (2 samples; first #0: grad of input 0: output 0: values differ (max abs diff 1.71))",
    "nn.functional.scaled_dot_product_attention:bwd":
        "wrong values (12 samples; first #2: grad of input 0: output 0: values differ (max abs diff 3.98))",
    "nn.functional.scaled_dot_product_attention:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (23 samples); wrong values (25 samples; first torch.float64 #2: output 0: values differ (max abs diff 17.4))",
    "nn.functional.softplus:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples)",
    "nn.functional.upsample_bilinear:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (3 samples); wrong values (3 samples; first torch.uint8 #0: output 0: values differ)",
    "normal.in_place:err":
        "another exception type than torch (#0: raised ValueError, torch RuntimeError)",
    "prod:fwd":
        "result dtype differs (torch.int32 #19: output 0: dtype int64, torch int32)",
    "quantile:bwd":
        "wrong values (12 samples; first #37: grad of input 1: output 0: values differ (max abs diff 2.74))",
    "rand_like:fwd":
        "refuses 9 samples torch accepts (torch.float64 #3: raised TypeError: randn_like() got an unexpected keyword argument 'device')",
    "randint_like:fwd":
        "refuses 48 samples torch accepts (torch.float64 #6: raised TypeError: randint_like() got an unexpected keyword argument 'device')",
    "randn_like:fwd":
        "refuses 9 samples torch accepts (torch.float64 #3: raised TypeError: randn_like() got an unexpected keyword argument 'device')",
    "scalar_tensor:fwd":
        "refuses 1 samples torch accepts (torch.uint8 #0: raised OverflowError: Python integer -5 out of bounds for uint8)",
    "scatter:bwd":
        "refuses 2 samples torch accepts (#7: forward raised IndexError: too many indices for array: array is 0-dimensional, but 1 were indexe)",
    "scatter:fwd":
        "refuses 42 samples torch accepts (torch.float64 #21: raised IndexError: too many indices for array: array is 0-dimensional, but 1 were)",
    "scatter_add:bwd":
        "refuses 1 samples torch accepts (#6: forward raised IndexError: too many indices for array: array is 0-dimensional, but 1 were indexe)",
    "scatter_add:fwd":
        "refuses 9 samples torch accepts (torch.float64 #6: raised IndexError: too many indices for array: array is 0-dimensional, but 1 were )",
    "scatter_reduce.prod:bwd":
        "refuses 1 samples torch accepts (#21: forward raised RuntimeError: scatter_reduce(): the gradient of reduce='prod' with a zero in src)",
    "searchsorted:fwd":
        "refuses 512 samples torch accepts (torch.float64 #128: raised ValueError: cannot reshape array of size 0 into shape (0))",
    "sinc:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples)",
    "sort:fwd":
        "float16 computed/accumulated in float16 where torch uses float32 (1 samples); wrong values (3 samples; first torch.int8 #0: output 1: values differ)",
    "std_mean.unbiased:bwd":
        "refuses 1 samples torch accepts (#0: backward raised RuntimeError: Mismatch in shape: grad_output has a shape of () and output has a )",
    "std_mean.unbiased:fwd":
        "result shape differs (torch.float64 #0: output 1: shape (5,), torch ())",
    "take:err":
        "another exception type than torch (#0: raised TypeError, torch RuntimeError)",
    "tensor_split:bwd":
        "refuses 1 samples torch accepts (#1: forward raised TypeError: iteration over a 0-d tensor)",
    "tensor_split:fwd":
        "refuses 9 samples torch accepts (torch.float64 #1: raised TypeError: iteration over a 0-d tensor)",
    "tensordot:bwd":
        "refuses 1 samples torch accepts (#2: forward raised RuntimeError: contracted dimensions need to match, but first has size 1 in dim 0 )",
    "tensordot:fwd":
        "refuses 8 samples torch accepts (torch.float64 #2: raised RuntimeError: contracted dimensions need to match, but first has size 1 in )",
    "topk:fwd":
        "wrong values (35 samples; first torch.int64 #0: output 1: values differ)",
    "trapezoid:fwd":
        "wrong values (5 samples; first torch.uint8 #0: output 0: values differ (max abs diff 2.43e+03))",
    "trapz:fwd":
        "wrong values (5 samples; first torch.uint8 #0: output 0: values differ (max abs diff 2.43e+03))",
    "unique_consecutive:fwd":
        "refuses 108 samples torch accepts (torch.float64 #252: raised ValueError: cannot reshape array of size 0 into shape (0,newaxis))",
    "var_mean.unbiased:bwd":
        "refuses 1 samples torch accepts (#0: backward raised RuntimeError: Mismatch in shape: grad_output has a shape of () and output has a )",
    "var_mean.unbiased:fwd":
        "result shape differs (torch.float64 #0: output 1: shape (5,), torch ())",
    "vstack:err":
        "another exception type than torch (#1: raised ValueError, torch RuntimeError)",
}
