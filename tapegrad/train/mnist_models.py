"""Model builders for `tapegrad train mnist --model NAME` (a registry other models join).

Every builder takes the run's config dict and returns a Module mapping a batch of images
(B, 1, 28, 28) float32 to logits (B, 10). To add a model:

    @register("cnn", "LeNet-style conv net")
    def cnn(config):
        return nn.Sequential(...)

The checkpoint stores the config, so `tapegrad eval` rebuilds the same architecture.
"""
from .. import nn

MODELS = {}


def register(name, help):
    """Decorator: make `builder(config) -> Module` available as `--model name`."""
    def deco(builder):
        MODELS[name] = (builder, help)
        return builder
    return deco


def build(name, config):
    if name not in MODELS:
        from .common import CLIError
        raise CLIError(f"unknown model {name!r} (choose {', '.join(sorted(MODELS))})")
    return MODELS[name][0](config)


@register("mlp", "multilayer perceptron 784-H1-...-10 with ReLU (--hidden, default 256)")
def mlp(config):
    """Flatten (B, 1, 28, 28) -> (B, 784), then Linear+ReLU per hidden size, then Linear
    to the 10 class logits."""
    hidden = [int(h) for h in config.get("hidden", [256])]
    layers, width = [nn.Flatten()], 28 * 28
    for h in hidden:
        layers += [nn.Linear(width, h), nn.ReLU()]
        width = h
    layers.append(nn.Linear(width, 10))
    return nn.Sequential(*layers)


@register("cnn", "conv net: 2x (3x3 conv + ReLU + 2x2 max-pool), 16/32 channels, linear head")
def cnn(config):
    """(B, 1, 28, 28) -> conv 1->16 -> pool -> conv 16->32 -> pool -> Linear(1568, 10);
    defined in tapegrad/train/cnn.py (issue 6)."""
    from .cnn import MnistCNN
    return MnistCNN()
