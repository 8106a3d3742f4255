"""The scalar engine's local rules as text, for the narrated backward of a `Value` graph.

This is TEXT ONLY: the derivatives that run are in tapegrad/value.py; nothing here is
executed as math. (A Tensor op's rule text lives in its own table entry, `Op.text`.)

VALUE_TEXT     Value op key -> per parent (formula, numbers) templates for one line of
               `w.grad += x.data * u.grad = 2.0 * 1.0 -> 2.0`, keyed by micrograd's
               op label (`_op`).
"""

# Value: (formula, numbers) per child. Fields: {out} {x} {y} names; {g} = out.grad,
# {ans} = out.data, {xd} {yd} = the children's data, {c} the exponent of '**c', {cm1} = c - 1,
# {ym1} = y.data - 1. Keys are micrograd's op labels ('**c' stands for '**2', '**-1', ...).
VALUE_TEXT = {
    "+": [("{out}.grad", "{g}"), ("{out}.grad", "{g}")],
    "*": [("{y}.data * {out}.grad", "{yd} * {g}"), ("{x}.data * {out}.grad", "{xd} * {g}")],
    "**c": [("{c} * {x}.data**{cm1} * {out}.grad", "{c} * {xd}**{cm1} * {g}")],
    "**": [("{y}.data * {x}.data**({y}.data - 1) * {out}.grad", "{yd} * {xd}**{ym1} * {g}"),
           ("{out}.data * log({x}.data) * {out}.grad", "{ans} * log({xd}) * {g}")],
    "exp": [("{out}.data * {out}.grad", "{ans} * {g}")],
    "log": [("{out}.grad / {x}.data", "{g} / {xd}")],
    "sqrt": [("0.5 / {out}.data * {out}.grad", "0.5 / {ans} * {g}")],
    "abs": [("sign({x}.data) * {out}.grad", "sign({xd}) * {g}")],
    "tanh": [("(1 - {out}.data**2) * {out}.grad", "(1 - {ans}**2) * {g}")],
    "sigmoid": [("{out}.data * (1 - {out}.data) * {out}.grad", "{ans} * (1 - {ans}) * {g}")],
    "ReLU": [("[{x}.data > 0] * {out}.grad", "[{xd} > 0] * {g}")],
    "sin": [("cos({x}.data) * {out}.grad", "cos({xd}) * {g}")],
    "cos": [("-sin({x}.data) * {out}.grad", "-sin({xd}) * {g}")],
}
