"""Human-readable local rules, for the narrated backward (`explain`) and the docs.

This is TEXT ONLY: the derivatives that run are in the op table (tapegrad/ops) and in
tapegrad/value.py; nothing here is executed as math. `g` is the gradient flowing into the
op's output, `ans` the op's output, `x`, `y` its inputs.

RULE_TEXT      Tensor op name -> short formula (one string; `;` separates the inputs)
VALUE_TEXT     Value op key -> per parent (formula, numbers) templates for one line of
               `w.grad += x.data * u.grad = 2.0 * 1.0 -> 2.0`. Keys with `_c` are the
               forms with a Python-number operand `c`.
"""

RULE_TEXT = {
    # elementwise
    "add": "dx = g ; dy = g",
    "sub": "dx = g ; dy = -g",
    "mul": "dx = g*y ; dy = g*x",
    "div": "dx = g/y ; dy = -g*ans/y",
    "pow": "dx = g*y*x**(y-1) ; dy = g*ans*log(x)",
    "neg": "dx = -g",
    "exp": "dx = g*ans",
    "log": "dx = g/x",
    "sqrt": "dx = g*0.5/ans",
    "rsqrt": "dx = -0.5*g*ans**3",
    "abs": "dx = g*sign(x)",
    "sign": "dx = 0",
    "sin": "dx = g*cos(x)",
    "cos": "dx = -g*sin(x)",
    "tanh": "dx = g*(1-ans**2)",
    "sigmoid": "dx = g*ans*(1-ans)",
    "relu": "dx = g where x>0 else 0",
    "gelu": "dx = g*gelu'(x)",
    "silu": "dx = g*s*(1+x*(1-s)), s=sigmoid(x)",
    "leaky_relu": "dx = g where x>0 else slope*g",
    "elu": "dx = g where x>0 else g*(ans+alpha)",
    "softplus": "dx = g*sigmoid(beta*x)",
    "clamp": "dx = g where min<=x<=max else 0",
    "maximum": "dx = g where x>y (half at ties) ; dy likewise",
    "minimum": "dx = g where x<y (half at ties) ; dy likewise",
    "where": "dx = g where cond ; dy = g where not cond",
    # reductions
    "sum": "dx = g broadcast back over the summed axes",
    "mean": "dx = g/n broadcast back over the reduced axes",
    "prod": "dx = g*ans/x",
    "var": "dx = g*2*(x-mean)/(n-correction)",
    "std": "dx = g*(x-mean)/((n-correction)*ans)",
    "amax": "dx = g at the max positions (shared at ties)",
    "amin": "dx = g at the min positions (shared at ties)",
    "max": "dx = g at the max positions (shared at ties; a nan max: at the nans)",
    "min": "dx = g at the min positions (shared at ties; a nan min: at the nans)",
    "max_dim": "dx = g scattered to the argmax",
    "min_dim": "dx = g scattered to the argmin",
    "logsumexp": "dx = g*softmax(x)",
    "softmax": "dx = ans*(g - sum(g*ans))",
    "log_softmax": "dx = g - exp(ans)*sum(g)",
    # linear algebra
    "matmul": "dX = g @ W^T ; dW = X^T @ g",
    "linear": "dX = g @ W ; dW = g^T @ X ; db = g.sum(0)",
    "bmm": "dX = g @ W^T ; dW = X^T @ g (per batch)",
    # shape and indexing (linear ops: the gradient is moved, not scaled)
    "reshape": "dx = g reshaped to x's shape",
    "flatten": "dx = g reshaped to x's shape",
    "unflatten": "dx = g reshaped to x's shape",
    "squeeze": "dx = g reshaped to x's shape",
    "unsqueeze": "dx = g reshaped to x's shape",
    "expand": "dx = g summed over the expanded axes",
    "permute": "dx = g permuted back",
    "transpose": "dx = g transposed back",
    "cat": "dx_i = the slice of g for input i",
    "stack": "dx_i = g[i]",
    "select": "dx = zeros with g placed at the index",
    "narrow": "dx = zeros with g placed in the slice",
    "index": "dx = zeros, g scatter-ADDED at the indices (repeats add)",
    "getitem": "dx = zeros, g scatter-ADDED at the indices (repeats add)",
    "gather": "dx = zeros, g scatter-added at the gathered positions",
    "embedding": "dW = zeros, g rows scatter-ADDED at the token ids (repeats add)",
    "pad": "dx = g with the padding cut off",
    "flip": "dx = g flipped back",
    "roll": "dx = g rolled back",
    "repeat": "dx = g summed over the repeats",
    "tril": "dx = tril(g)",
    "triu": "dx = triu(g)",
    "clone": "dx = g",
    "alias": "dx = g",
    "cast": "dx = g cast to x's dtype",
    # fused nn ops
    "cross_entropy": "dlogits = (softmax(logits) - onehot(y)) / n",
    "nll_loss": "dlogp = -onehot(y)/n",
    "mse_loss": "dx = 2*(x-y)/n ; dy = -dx",
    "batch_norm": "dx = (g - mean(g) - xhat*mean(g*xhat)) * w/std",
    "layer_norm": "dx = (g*w - mean(g*w) - xhat*mean(g*w*xhat)) / std",
    "dropout": "dx = g*mask/(1-p)",
    "conv2d": "dX = conv_transpose(g, W) ; dW = conv(X, g)",
    "conv1d": "dX = conv_transpose(g, W) ; dW = conv(X, g)",
    "max_pool2d": "dx = g routed to each window's max",
    "avg_pool2d": "dx = g/k^2 spread over each window",
    "scaled_dot_product_attention": "dQ, dK, dV through softmax(QK^T/sqrt(d))V",
}


def rule_text(op):
    """The short formula for a Tensor op (an `Op` or its name)."""
    name = getattr(op, "name", op)
    if name in RULE_TEXT:
        return RULE_TEXT[name]
    doc = getattr(op, "doc", None)
    if doc:
        return doc.strip().splitlines()[0]
    return f"vjp of {name} (see the op table)"


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
