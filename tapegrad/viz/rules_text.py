"""The scalar engine's local rules as text, for the narrated backward of a `Value` graph.

This is TEXT ONLY: the derivatives that run are in tapegrad/value.py; nothing here is
executed as math. (A Tensor op's rule text lives in its own table entry, `Op.text`.)

VALUE_TEXT     Value op key -> per parent (formula, numbers) templates for one line of
               `w.grad += x.data * u.grad = 2.0 * 1.0 -> 2.0`. Keys with `_c` are the
               forms with a Python-number operand `c`.
"""

# Value: (formula, numbers) per parent. Fields: {out} {x} {y} names; {g} = out.grad,
# {ans} = out.data, {xd} {yd} = parents' data, {c} the number operand, {cm1} = c - 1,
# {ym1} = y.data - 1.
VALUE_TEXT = {
    "add": [("{out}.grad", "{g}"), ("{out}.grad", "{g}")],
    "add_c": [("{out}.grad", "{g}")],
    "sub": [("{out}.grad", "{g}"), ("-{out}.grad", "-{g}")],
    "sub_c": [("{out}.grad", "{g}")],
    "rsub": [("-{out}.grad", "-{g}")],
    "mul": [("{y}.data * {out}.grad", "{yd} * {g}"), ("{x}.data * {out}.grad", "{xd} * {g}")],
    "mul_c": [("{c} * {out}.grad", "{c} * {g}")],
    "div": [("{out}.grad / {y}.data", "{g} / {yd}"),
            ("-{out}.data / {y}.data * {out}.grad", "-{ans} / {yd} * {g}")],
    "div_c": [("{out}.grad / {c}", "{g} / {c}")],
    "rdiv": [("-{out}.data / {x}.data * {out}.grad", "-{ans} / {xd} * {g}")],
    "pow": [("{y}.data * {x}.data**({y}.data - 1) * {out}.grad", "{yd} * {xd}**{ym1} * {g}"),
            ("{out}.data * log({x}.data) * {out}.grad", "{ans} * log({xd}) * {g}")],
    "pow_c": [("{c} * {x}.data**{cm1} * {out}.grad", "{c} * {xd}**{cm1} * {g}")],
    "rpow": [("{out}.data * log({c}) * {out}.grad", "{ans} * log({c}) * {g}")],
    "neg": [("-{out}.grad", "-{g}")],
    "exp": [("{out}.data * {out}.grad", "{ans} * {g}")],
    "log": [("{out}.grad / {x}.data", "{g} / {xd}")],
    "sqrt": [("0.5 / {out}.data * {out}.grad", "0.5 / {ans} * {g}")],
    "abs": [("sign({x}.data) * {out}.grad", "sign({xd}) * {g}")],
    "tanh": [("(1 - {out}.data**2) * {out}.grad", "(1 - {ans}**2) * {g}")],
    "sigmoid": [("{out}.data * (1 - {out}.data) * {out}.grad", "{ans} * (1 - {ans}) * {g}")],
    "relu": [("[{out}.data > 0] * {out}.grad", "[{ans} > 0] * {g}")],
    "sin": [("cos({x}.data) * {out}.grad", "cos({xd}) * {g}")],
    "cos": [("-sin({x}.data) * {out}.grad", "-sin({xd}) * {g}")],
}
