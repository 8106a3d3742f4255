"""What torch refuses, tapegrad refuses with the same exception type (and the start of its
message); what torch accepts next to it, tapegrad accepts with the same result.

Each case is `lambda L: ...` run with L = torch and L = tapegrad: out= tensors that
overlap (expanded, the input itself, a view of it before or after torch's in-place
resize), out= dtypes the op does not cast to, Python numbers where torch wants tensors,
reductions over empty or repeated dims, arguments out of range (op_db's error inputs,
by family).
"""
import numpy as np
import pytest
import torch

import tapegrad as tg

from _helpers import assert_raises_as_torch, assert_same_result


def _vals(L, *shape, dtype=None):
    """The same values in both libraries (float32 unless dtype)."""
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) / 7 - 1
    return L.tensor(a, dtype=dtype or L.float32)


def _idx(L, *v):
    return L.tensor(list(v), dtype=L.int64)


def _expanded(L, n):
    """n elements in one memory location (an expand of one element)."""
    return _vals(L, 1).expand(n)


RAISES = {
    # ---- out= tensors that overlap (torch's assert_no_internal_overlap / no_overlap) ----
    "add out expanded": lambda L: L.add(_vals(L, 3), 1, out=_expanded(L, 3)),
    "cat out expanded": lambda L: L.cat([_vals(L, 2, 3), _vals(L, 2, 3)],
                                        out=_vals(L, 1, 3).expand(4, 3)),
    "cat out is an input": lambda L: (lambda y: L.cat((L.zeros(0), y), out=y))(_vals(L, 4, 6)),
    "cat out is an empty input": lambda L: (lambda x: L.cat((x, _vals(L, 4, 6)), out=x))(
        L.zeros(0)),
    "cat out a view of an input": lambda L: (lambda z: L.cat((_vals(L, 4, 6), z), out=z[:2]))(
        L.zeros(4, 6)),
    "gather out expanded": lambda L: L.gather(_vals(L, 6), 0, _idx(L, 2, 1, 0),
                                              out=_expanded(L, 3)),
    "gather out is the input": lambda L: (lambda s: L.gather(s, 0, _idx(L, 2, 1, 0), out=s))(
        _vals(L, 6)),
    "gather out resized onto the index": lambda L: (lambda i: L.gather(
        i.clone(), 0, i[1:], out=i[:1]))(_idx(L, 2, 1, 0)),
    "take out expanded": lambda L: L.take(_vals(L, 6), _idx(L, 2, 1, 0), out=_expanded(L, 3)),
    "take out overlaps the index": lambda L: (lambda i: L.take(i.clone(), i[1:], out=i[:-1]))(
        _idx(L, 2, 1, 0)),
    "take out expanded, resized": lambda L: L.take(_vals(L, 6), _idx(L, 0, 1, 2),
                                                   out=_expanded(L, 2)),
    "index_select out expanded, resized": lambda L: L.index_select(
        _vals(L, 3, 6), 1, _idx(L, 0, 1), out=_vals(L, 1, 6).expand(2, 6)),
    "masked_select out is the mask": lambda L: (lambda m: L.masked_select(m.clone(), m, out=m))(
        L.tensor([True, False, True])),
    "kthvalue out is the input": lambda L: (lambda t: L.kthvalue(
        t, 5, out=(t, L.zeros((), dtype=L.int64))))(_vals(L, 10)),
    "bernoulli out expanded": lambda L: L.bernoulli(L.full((6,), 0.5), out=_expanded(L, 6)),
    # ---- out= dtypes the op does not cast to ----
    "gather out float64": lambda L: L.gather(_vals(L, 2, 2), 1, _idx(L, 0, 1).view(2, 1),
                                             out=L.zeros(2, 1, dtype=L.float64)),
    "aminmax out float64": lambda L: L.aminmax(_vals(L, 4, 5), dim=0, out=(
        L.zeros(0), L.zeros(0, dtype=L.float64))),
    "amax out int32": lambda L: L.amax(_vals(L, 4, 5), 0, out=L.zeros(0, dtype=L.int32)),
    "multinomial out float64": lambda L: L.multinomial(L.ones(1, 2, dtype=L.float64), 2,
                                                       out=L.zeros(1, 2, dtype=L.float64)),
    "fmod out int64": lambda L: L.fmod(_vals(L, 3), 2, out=L.zeros(3, dtype=L.int64)),
    "arange out int64 step 0.5": lambda L: L.arange(0, 64, 0.5,
                                                    out=L.zeros(0, dtype=L.int64)),
    # ---- tensors where torch wants them ----
    "eq(number, tensor)": lambda L: L.eq(2, _idx(L, 1, 2, 3)),
    "lt(number, tensor)": lambda L: L.lt(2, _idx(L, 1, 2, 3)),
    "fmod(number, tensor)": lambda L: L.fmod(2, _idx(L, 1, 2, 3)),
    "logical_and(tensor, number)": lambda L: L.logical_and(_idx(L, 1, 2, 3), 2),
    "logical_xor(number, tensor)": lambda L: L.logical_xor(2, _idx(L, 1, 2, 3)),
    "isclose(tensor, number)": lambda L: L.isclose(_idx(L, 1, 2, 3), 2),
    "isclose dtypes": lambda L: L.isclose(_vals(L, 3), _idx(L, 1, 2, 3)),
    "isclose rtol < 0": lambda L: L.isclose(_vals(L), _vals(L), rtol=-0.4),
    "isclose atol < 0": lambda L: L.isclose(_vals(L), _vals(L), atol=-0.4),
    "cat of a tensor": lambda L: L.cat(_vals(L, 2, 3)),
    "stack of a tensor": lambda L: L.stack(_vals(L, 2, 3)),
    "narrow float start": lambda L: L.narrow(_vals(L, 4, 5), 0, L.tensor(1.0), 2),
    # ---- reductions ----
    "amax of empty": lambda L: L.amax(L.zeros(5, 0, 5)),
    "amin over an empty dim": lambda L: L.amin(L.zeros(5, 0, 5), 1),
    "amax repeated dim": lambda L: L.amax(_vals(L, 3, 3, 3, 3), (0, -4)),
    "sum repeated dim": lambda L: L.sum(_vals(L, 3, 3), (1, 1)),
    "aminmax of empty": lambda L: L.aminmax(L.zeros(5, 0, 5)),
    # ---- values ----
    "neg of bool": lambda L: L.neg(L.tensor([False, True])),
    "-bool": lambda L: -L.tensor([False, True]),
    "neg_ of bool": lambda L: L.tensor([False, True]).neg_(),
    "normal_ std < 0": lambda L: L.zeros(10).normal_(0, -1),
    "masked_fill complex": lambda L: _vals(L, 2, 2).masked_fill(L.tensor(False), 1j),
    "masked_fill 1e300 into float32": lambda L: _vals(L, 2).masked_fill(L.tensor(True), 1e300),
    "masked_fill 256 into uint8": lambda L: L.zeros(2, dtype=L.uint8).masked_fill(
        L.tensor(True), 256),
    "masked_fill -256 into uint8": lambda L: L.zeros(2, dtype=L.uint8).masked_fill(
        L.tensor(True), -256),
    "masked_fill -129 into int8": lambda L: L.zeros(2, dtype=L.int8).masked_fill(
        L.tensor(True), -129),
    # ---- nn.functional ----
    "huber_loss delta 0": lambda L: L.nn.functional.huber_loss(_vals(L, 3), _vals(L, 3),
                                                               delta=0.0),
    "huber_loss delta < 0": lambda L: L.nn.functional.huber_loss(_vals(L, 3), _vals(L, 3),
                                                                 delta=-1.0),
    "embedding 1-d weight": lambda L: L.nn.functional.embedding(L.zeros(2, 2, dtype=L.int64),
                                                                _vals(L, 3)),
    "embedding 3-d weight": lambda L: L.nn.functional.embedding(L.zeros(2, 2, dtype=L.int64),
                                                                _vals(L, 1, 1, 1)),
    "conv1d bias dtype": lambda L: L.nn.functional.conv1d(
        L.ones(1, 1, 4, dtype=L.int64), L.ones(1, 1, 2, dtype=L.int64),
        L.ones(1, dtype=L.float64)),
    "conv2d weight dtype": lambda L: L.nn.functional.conv2d(
        L.ones(1, 1, 4, 4), L.ones(1, 1, 2, 2, dtype=L.float64)),
    "conv3d bias dtype": lambda L: L.nn.functional.conv3d(
        L.ones(1, 1, 3, 3, 3), L.ones(1, 1, 2, 2, 2), L.ones(1, dtype=L.float64)),
    "adaptive_avg_pool1d no size": lambda L: L.nn.functional.adaptive_avg_pool1d(
        _vals(L, 1, 2, 3), ()),
    "adaptive_avg_pool2d 2-d input, tuple size": lambda L: L.nn.functional.adaptive_avg_pool2d(
        _vals(L, 2, 2), (2, 2)),
    "adaptive_avg_pool2d no size": lambda L: L.nn.functional.adaptive_avg_pool2d(
        _vals(L, 1, 2, 3, 4), ()),
    "adaptive_max_pool2d 2-d input, tuple size": lambda L: L.nn.functional.adaptive_max_pool2d(
        _vals(L, 2, 2), (2, 2)),
    "adaptive_max_pool2d 2-d input, int size": lambda L: L.nn.functional.adaptive_max_pool2d(
        _vals(L, 2, 2), 2),
    "adaptive_max_pool2d no size": lambda L: L.nn.functional.adaptive_max_pool2d(
        _vals(L, 1, 2, 3, 4), ()),
    "adaptive_max_pool1d negative size": lambda L: L.nn.functional.adaptive_max_pool1d(
        _vals(L, 1, 1, 1), (-1,)),
    "max_pool1d no channels": lambda L: L.nn.functional.max_pool1d(L.zeros(0, 10), 1),
    "max_pool1d empty length": lambda L: L.nn.functional.max_pool1d(L.zeros(2, 3, 0), 1),
}


# torch words these its own way per op; tapegrad gives its common out= dtype sentence
TYPE_ONLY = {"amax out int32", "multinomial out float64"}


@pytest.mark.parametrize("name", list(RAISES))
def test_raises_as_torch(name):
    assert_raises_as_torch(RAISES[name], tg, chars=0 if name in TYPE_ONLY else 30)


ACCEPTS = {
    # torch's own op_db lists these as error inputs but accepts them (test_errors is an
    # expected failure there): python numbers on the right of clamp_max/clamp_min
    "clamp_max(tensor, number)": lambda L: L.clamp_max(_idx(L, 1, 2, 3), 2),
    "clamp_min(tensor, number)": lambda L: L.clamp_min(_idx(L, 1, 2, 3), 2),
    "eq(tensor, number)": lambda L: L.eq(_idx(L, 1, 2, 3), 2),
    "fmod(tensor, number)": lambda L: L.fmod(_idx(L, 1, 5, 3), 2),
    "2 < tensor": lambda L: 2 < _idx(L, 1, 2, 3),
    "eq out float32": lambda L: L.eq(_idx(L, 1, 2), 2, out=L.zeros(2)),
    "logical_and out int64": lambda L: L.logical_and(_idx(L, 0, 2), _idx(L, 1, 1),
                                                     out=L.zeros(2, dtype=L.int64)),
    "cat out float64 (cast)": lambda L: L.cat([_vals(L, 2), _vals(L, 3)],
                                              out=L.zeros(5, dtype=L.float64)),
    "cat out disjoint view": lambda L: (lambda z: L.cat([_vals(L, 2)], out=z[2:]) * 1)(
        L.zeros(4)),
    "gather into a fresh out": lambda L: L.gather(_vals(L, 2, 2), 1, _idx(L, 1, 0).view(2, 1),
                                                  out=L.zeros(2, 1)),
    "kthvalue out": lambda L: L.kthvalue(_vals(L, 6), 2, out=(L.zeros(()),
                                                              L.zeros((), dtype=L.int64))),
    "amax out float32": lambda L: L.amax(_vals(L, 4, 5), 0, out=L.zeros(5)),
    "amax over a non-empty dim of an empty tensor": lambda L: L.amax(L.zeros(5, 0, 5), 0),
    "arange out float32": lambda L: L.arange(0, 4, 0.5, out=L.zeros(0)),
    "arange out int64": lambda L: L.arange(0, 8, 2, out=L.zeros(0, dtype=L.int64)),
    "narrow int tensor start": lambda L: L.narrow(_vals(L, 4, 5), 0, L.tensor(1), 2),
    "masked_fill -255 into uint8": lambda L: L.zeros(2, dtype=L.uint8).masked_fill(
        L.tensor(True), -255),
    "masked_fill 255 into uint8": lambda L: L.zeros(2, dtype=L.uint8).masked_fill(
        L.tensor(True), 255),
    "masked_fill inf into float16": lambda L: L.zeros(2, dtype=L.float16).masked_fill(
        L.tensor(True), float("inf")),
    "masked_fill anything into bool": lambda L: L.zeros(2, dtype=L.bool).masked_fill(
        L.tensor(True), 2),
    "adaptive_max_pool2d None size": lambda L: L.nn.functional.adaptive_max_pool2d(
        _vals(L, 1, 2, 5), (2, None)),
    "max_pool1d empty batch": lambda L: L.nn.functional.max_pool1d(L.zeros(0, 2, 10), 1),
    "neg of int": lambda L: L.neg(_idx(L, 1, -2)),
}


@pytest.mark.parametrize("name", list(ACCEPTS))
def test_accepts_as_torch(name):
    assert_same_result(ACCEPTS[name](tg), ACCEPTS[name](torch))
