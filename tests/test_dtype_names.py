"""dtypes.py holds the one table of dtype names (`_NAMES`): each row checked against
torch (its dtype names and aliases, legacy tensor type, scalar-type name, the C++ type
its bound messages print) and safetensors (its dtype codes)."""
import warnings

import pytest
import safetensors.torch as st
import torch

import tapegrad as tg
from tapegrad import dtypes as D


@pytest.mark.parametrize("row", D._NAMES, ids=lambda row: row[0].name)
def test_a_row_names_the_dtype_as_torch_does(row):
    d, aliases, scalar, legacy, cpp, code = row
    td = getattr(torch, d.name)
    for n in (d.name, *aliases):
        assert getattr(torch, n) is td and getattr(tg, n) is d, n
        assert D.as_dtype(n) == d.dtype and D.as_dtype("torch." + n) == d.dtype
    assert torch.empty(0, dtype=td).type() == "torch." + legacy
    assert D.legacy_name(d) == legacy and D.LEGACY_TYPES[legacy] is d
    assert D.torch_name(d) == scalar == legacy[:-len("Tensor")]
    assert st._TYPES[code] is td and D.SAFETENSORS[code] == d.dtype
    assert D.cpp_name(d) == cpp


def test_the_table_covers_every_dtype_and_names_each_once():
    assert {row[0].dtype for row in D._NAMES} == set(D._BY_NP) == D._SUPPORTED
    names = [n for row in D._NAMES for n in (row[0].name, *row[1])]
    assert len(names) == len(set(names)) == len(D._BY_NAME)


def _torch_cpp_name(td):
    """The C++ type a torch message prints for dtype `td`."""
    if td.is_floating_point:  # random_'s range warning (c10::Half: an error)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            try:
                torch.empty(2, dtype=td).random_(-2 ** 63, 0)
            except RuntimeError as e:
                return str(e).split(" for ")[-1]
        return str(seen[0].message).split("limitations ")[1].split(" can support")[0]
    with pytest.raises(RuntimeError) as e:  # cauchy_ names the integer type it refuses
        torch.empty(2, dtype=td).cauchy_()
    return str(e.value).split("you specified ")[1]


@pytest.mark.parametrize("row", D._NAMES, ids=lambda row: row[0].name)
def test_cpp_names_as_torch_prints_them(row):
    assert D.cpp_name(row[0]) == _torch_cpp_name(getattr(torch, row[0].name))
