"""tg.save / tg.load at the edges the OS and a crafted file set: 245-255-byte file names
(the hidden temporary name must still fit NAME_MAX) and a checkpoint that marks an
integer tensor as requiring grad (an error naming the file, not a bare RuntimeError)."""
import json
import os
import zlib

import numpy as np
import pytest
import torch
from safetensors.numpy import save as st_save

import tapegrad as tg


@pytest.mark.parametrize("length", [200, 245, 250, 254, 255])
def test_save_accepts_every_legal_file_name_length(tmp_path, length):
    name_max = os.pathconf(tmp_path, "PC_NAME_MAX")
    assert name_max >= 255
    path = tmp_path / ("c" * length)
    torch.save({"w": torch.ones(2)}, tmp_path / ("t" * length))  # torch: legal
    tg.save({"w": tg.ones(2)}, path)
    assert tg.load(path)["w"].tolist() == [1.0, 1.0]
    tg.save({"w": tg.zeros(2)}, path)  # overwrite: the temporary file again
    assert tg.load(path)["w"].tolist() == [0.0, 0.0]
    assert sorted(os.listdir(tmp_path)) == sorted(["c" * length, "t" * length])


def test_save_of_a_multibyte_name_at_the_limit(tmp_path):
    path = tmp_path / ("é" * 127)  # 254 bytes in UTF-8: the cut must not split a character
    tg.save([tg.ones(1)], path)
    assert tg.load(path)[0].tolist() == [1.0]
    assert os.listdir(tmp_path) == ["é" * 127]


def _crc(text, tensors):
    # the format's checksum, written out here (see test_serialization._crc)
    st = {"float32": "F32", "int64": "I64", "int32": "I32"}
    crc = zlib.crc32(text.encode())
    for name in sorted(tensors):
        a = tensors[name]
        crc = zlib.crc32(json.dumps([name, st[a.dtype.name], list(a.shape)]).encode(), crc)
        crc = zlib.crc32(a.tobytes(), crc)
    return str(crc)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_integer_tensor_marked_requires_grad_is_refused_naming_the_file(tmp_path, dtype):
    path = tmp_path / "crafted.pt"
    text = json.dumps({"format": "tapegrad", "version": 2, "shared": [],
                       "root": {"t": "dict", "items": [["step", {"t": "tensor", "a": "step",
                                                                 "rg": True}]]}})
    tensors = {"step": np.arange(3, dtype=dtype)}
    path.write_bytes(st_save(tensors, metadata={"tapegrad": text,
                                                "tapegrad.crc32": _crc(text, tensors)}))
    with pytest.raises(RuntimeError) as info:
        tg.load(path)
    msg = str(info.value)
    assert f"tg.load: '{path}' is damaged or not a tapegrad checkpoint" in msg, msg
    assert f"tensor 'step' of dtype {np.dtype(dtype).name} is marked as requiring grad" in msg
    # torch's own words for the rule
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype "
                                           "can require gradients"):
        torch.arange(3).requires_grad_(True)
    assert "only Tensors of floating point dtype can require gradients" in msg
