"""Custom autograd Functions written once for both libraries (`L` is tapegrad or torch):
ones that save their outputs, return intermediates, or modify an input in place.
`functions(L)` maps a name to a function of two tensors built from them."""


def functions(L):
    class Exp(L.autograd.Function):
        """The PyTorch docs' example: saves its OUTPUT."""

        @staticmethod
        def forward(ctx, x):
            y = x.exp()
            ctx.save_for_backward(y)
            return y

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    class Cube(L.autograd.Function):
        """Returns an intermediate (dx = 3x^2) as an output and saves it (setup_context
        style, as in PyTorch's double-backward tutorial); backward uses both grads."""

        @staticmethod
        def forward(x):
            return x ** 3, 3 * x ** 2

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output[1])

        @staticmethod
        def backward(ctx, g, g_dx):
            x, dx = ctx.saved_tensors
            return g * dx + g_dx * 6 * x

    class SinCos(L.autograd.Function):
        """Two outputs, both saved; backward combines both incoming gradients."""

        @staticmethod
        def forward(ctx, x, y):
            s, c = (x * y).sin(), (x * y).cos()
            ctx.save_for_backward(x, y, s, c)
            return s, c

        @staticmethod
        def backward(ctx, gs, gc_):
            x, y, s, c = ctx.saved_tensors
            d = gs * c - gc_ * s
            return d * y, d * x

    class ExpInplace(L.autograd.Function):
        """Changes its input in place (mark_dirty) and saves the result."""

        @staticmethod
        def forward(ctx, x):
            x.exp_()
            ctx.mark_dirty(x)
            ctx.save_for_backward(x)
            return x

        @staticmethod
        def backward(ctx, g):
            (y,) = ctx.saved_tensors
            return g * y

    return {
        "Exp": (lambda x, y: Exp.apply(x * y)),
        "Cube": (lambda x, y: sum(o.sin() for o in Cube.apply(x + y))),
        "SinCos": (lambda x, y: SinCos.apply(x, y)[0] * SinCos.apply(y, x)[1] ** 2),
        "ExpInplace": (lambda x, y: ExpInplace.apply(x * y) * x),
    }
