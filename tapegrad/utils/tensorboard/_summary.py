"""The values SummaryWriter logs, made as torch.utils.tensorboard makes them.

tensorboardX builds most summaries the way torch does; this module holds the
conversions and the few summaries where it does not:

- tapegrad tensors become NumPy arrays (tensorboardX knows torch's tensors only);
- image pixels follow torch's rule (scaled by 255 unless uint8, then clipped to
  [0, 255]; tensorboardX does not clip, so 1.2 wraps around to a dark pixel);
- tags stay as given (tensorboardX replaces spaces and other characters by `_`);
- scalars have torch's `new_style` / `double_precision` tensor form;
- `add_tensor` (not in tensorboardX) and audio (tensorboardX's needs the soundfile
  package and takes (length, channels); torch's takes (1, length), writes 16-bit PCM);
- hparams: torch stores bools and one-element tensors as numbers, refuses other
  types, and records `hparam_domain_discrete` (tensorboardX has no such argument).
"""
import io
import wave

import numpy as np
from google.protobuf import struct_pb2
from tensorboardX import summary as _tbx
from tensorboardX.proto.plugin_hparams_pb2 import HParamsPluginData
from tensorboardX.proto.summary_pb2 import Summary, SummaryMetadata
from tensorboardX.proto.tensor_pb2 import TensorProto
from tensorboardX.proto.tensor_shape_pb2 import TensorShapeProto

from ..._tensor import Tensor


def to_numpy(x):
    """A tapegrad tensor as a NumPy array (detached: a log holds values, not graphs);
    anything else (arrays, numbers, torch tensors) as it is: tensorboardX reads those."""
    return x.detach().numpy() if isinstance(x, Tensor) else x


def plain(x):
    """A tapegrad tensor as Python numbers (protobuf fields take numbers and lists)."""
    return x.detach().numpy().tolist() if isinstance(x, Tensor) else x


def uint8_pixels(x):
    """torch's pixel rule: uint8 kept, other dtypes times 255, clipped to [0, 255]."""
    arr = np.asarray(to_numpy(x))
    scale = 1 if arr.dtype == np.uint8 else 255
    return (arr.astype(np.float32) * scale).clip(0, 255).astype(np.uint8)


def video_frames(x):
    """Frames for tensorboardX's video: float frames clipped to [0, 1] in float32, so its
    unclipped `x * 255` gives torch's clipped float32 product; uint8 frames as they are."""
    arr = np.asarray(to_numpy(x))
    return arr if arr.dtype == np.uint8 else arr.astype(np.float32).clip(0, 1)


def keep_tag(summary, tag):
    """tensorboardX's summary with the caller's tag: torch writes tags unchanged."""
    summary.value[0].tag = tag
    return summary


def scalar(tag, value, new_style=False, double_precision=False):
    arr = np.asarray(to_numpy(value)).squeeze()
    if arr.ndim != 0:
        raise AssertionError(f"Tensor should contain one element (0 dimensions). "
                             f"Was given size: {arr.size} and {arr.ndim} dimensions.")
    value = float(arr)
    if not new_style:
        return Summary(value=[Summary.Value(tag=tag, simple_value=value)])
    if double_precision:
        proto = TensorProto(double_val=[value], dtype="DT_DOUBLE")
    else:
        proto = TensorProto(float_val=[value], dtype="DT_FLOAT")
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=tag, tensor=proto, metadata=smd)])


def _float16_bits(a):
    # torch stores each half as the int32 bit pattern of its float32 value (half_to_int)
    return a.astype(np.float32).view(np.int32).ravel().tolist()


def _complex_parts(a):
    return np.ascontiguousarray(a).view(a.real.dtype).ravel().tolist()


# numpy dtype -> (TensorProto dtype, value field, values). uint8 goes to int_val, where
# TensorBoard reads it (torch writes uint32_val, a field tensorboardX's proto lacks).
_TENSOR_FIELDS = {
    np.dtype(np.float16): ("DT_HALF", "half_val", _float16_bits),
    np.dtype(np.float32): ("DT_FLOAT", "float_val", None),
    np.dtype(np.float64): ("DT_DOUBLE", "double_val", None),
    np.dtype(np.int8): ("DT_INT8", "int_val", None),
    np.dtype(np.uint8): ("DT_UINT8", "int_val", None),
    np.dtype(np.int16): ("DT_INT16", "int_val", None),
    np.dtype(np.int32): ("DT_INT32", "int_val", None),
    np.dtype(np.int64): ("DT_INT64", "int64_val", None),
    np.dtype(np.bool_): ("DT_BOOL", "bool_val", None),
    np.dtype(np.complex64): ("DT_COMPLEX64", "scomplex_val", _complex_parts),
    np.dtype(np.complex128): ("DT_COMPLEX128", "dcomplex_val", _complex_parts),
}


def tensor(tag, x):
    """torch's add_tensor summary: the whole tensor in a TensorProto ("tensor" plugin)."""
    arr = np.asarray(to_numpy(x))
    if arr.nbytes >= (1 << 31):
        raise ValueError("tensor is bigger than protocol buffer's hard limit of 2GB in size")
    if arr.dtype not in _TENSOR_FIELDS:
        raise ValueError(f"{tag} has unsupported tensor dtype {arr.dtype}")
    dtype, field, values = _TENSOR_FIELDS[arr.dtype]
    shape = TensorShapeProto(dim=[TensorShapeProto.Dim(size=n) for n in arr.shape])
    proto = TensorProto(dtype=dtype, tensor_shape=shape,
                        **{field: values(arr) if values else arr.ravel().tolist()})
    smd = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="tensor"))
    return Summary(value=[Summary.Value(tag=tag, metadata=smd, tensor=proto)])


def audio(tag, x, sample_rate=44100):
    """torch's audio summary: a mono 16-bit PCM WAV of the squeezed 1-d signal."""
    arr = np.asarray(to_numpy(x)).squeeze()
    if abs(arr).max() > 1:
        print("warning: audio amplitude out of range, auto clipped.")
        arr = arr.clip(-1, 1)
    if arr.ndim != 1:
        raise AssertionError("input tensor should be 1 dimensional.")
    arr = (arr * np.iinfo(np.int16).max).astype("<i2")
    with io.BytesIO() as fio:
        with wave.open(fio, "wb") as w:
            w.setnchannels(1)
            w.setsampwidth(2)
            w.setframerate(sample_rate)
            w.writeframes(arr.data)
        wav = fio.getvalue()
    clip = Summary.Audio(sample_rate=sample_rate, num_channels=1, length_frames=arr.shape[-1],
                         encoded_audio_string=wav, content_type="audio/wav")
    return Summary(value=[Summary.Value(tag=tag, audio=clip)])


def _hparam_value(v):
    # torch's order of checks: bool is an int, so True is stored as the number 1.0
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, Tensor):
        return float(v.detach().numpy().reshape(-1)[0])
    raise ValueError("value should be one of int, float, str, bool, or torch.Tensor")


def hparams(hparam_dict, metric_dict, hparam_domain_discrete=None):
    """The experiment, session-start and session-end summaries of torch's add_hparams."""
    domains = hparam_domain_discrete or {}
    if not isinstance(domains, dict):
        raise TypeError("parameter: hparam_domain_discrete should be a dictionary, nothing logged.")
    for k, v in domains.items():
        if (k not in hparam_dict or not isinstance(v, list)
                or not all(isinstance(d, type(hparam_dict[k])) for d in v)):
            raise TypeError(f"parameter: hparam_domain_discrete[{k}] should be a list of same "
                            f"type as hparam_dict[{k}].")
    values = {k: _hparam_value(v) for k, v in hparam_dict.items()}
    exp, ssi, sei = _tbx.hparams(values, metric_dict)
    if domains:
        meta = exp.value[0].metadata.plugin_data
        data = HParamsPluginData.FromString(meta.content)
        for info in data.experiment.hparam_infos:
            if info.name in domains:
                kind = "string_value" if isinstance(values[info.name], str) else "number_value"
                info.domain_discrete.values.extend(
                    struct_pb2.Value(**{kind: d}) for d in domains[info.name])
        meta.content = data.SerializeToString()
    return exp, ssi, sei
