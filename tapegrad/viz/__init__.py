"""Making backprop visible: narrated backward (`explain`), graph pictures (`draw`, `to_dot`),
the step-through page of a backward pass (`stepper`).

Optional extras (graphviz, matplotlib) are imported lazily inside the functions that use
them, so `import tapegrad` needs NumPy only.
"""
from .draw import draw, has_dot, to_dot, to_svg
from .explain import explain
from .stepper import StepperPage, stepper

__all__ = ["draw", "to_dot", "to_svg", "has_dot", "explain", "stepper", "StepperPage"]
