"""Model builders for `tapegrad train mnist --model NAME` (a registry other models join).

Every builder takes the run's config dict and returns a Module mapping a batch of images
(B, 1, 28, 28) float32 to logits (B, 10). To add a model:

    @register("lenet", "LeNet-style conv net", recipe={"lr": 3e-3, "batch_size": 32})
    def lenet(config):
        return nn.Sequential(...)

`recipe` holds the model's own training defaults (`lr`, `batch_size`, `schedule`, and
`arch`, which the config stores for `tapegrad eval`), used where the user gives no flag;
the others come from the CLI (Adam, lr 1e-3, batch 64, a constant lr). The checkpoint
stores the config, so `tapegrad eval` rebuilds the same architecture.
"""
from .. import nn

MODELS = {}
RECIPES = {}   # model name -> its training defaults (see the module docstring)


def register(name, help, recipe=None):
    """Decorator: make `builder(config) -> Module` available as `--model name`."""
    def deco(builder):
        MODELS[name] = (builder, help)
        RECIPES[name] = dict(recipe or {})
        return builder
    return deco


def recipe(name):
    """The training defaults of model `name` ({} for a model without its own)."""
    return dict(RECIPES.get(name, {}))


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


# The cnn's architecture, stored in the run's config as "arch" so that `tapegrad eval`
# rebuilds what was trained; a config without it is a checkpoint of the first CNN (no hidden layer).
CNN_ARCH = {"channels": [16, 32], "hidden": 128}
CNN_ARCH_ISSUE6 = {"channels": [16, 32], "hidden": 0}


def cnn_arch(config):
    """The cnn's {"channels": [c1, c2], "hidden": h} from `config` (ValueError if it is
    not two channel counts >= 1 and a hidden size >= 0, integers up to 65536)."""
    arch = config.get("arch", CNN_ARCH_ISSUE6)
    try:
        (c1, c2), hidden = arch["channels"], arch["hidden"]
        ok = all(type(v) is int for v in (c1, c2, hidden))
    except (TypeError, ValueError, KeyError):
        ok = False
    if not ok or not (1 <= c1 <= 65536 and 1 <= c2 <= 65536 and 0 <= hidden <= 65536):
        raise ValueError(f"bad cnn architecture {arch!r} (expected channels [c1, c2] "
                         "and hidden, integers)")
    return {"channels": [c1, c2], "hidden": hidden}


def cnn_param_count(arch):
    """Parameters of the cnn `arch` describes (computed without building it)."""
    (c1, c2), h = arch["channels"], arch["hidden"]
    convs = (9 + 1) * c1 + (9 * c1 + 1) * c2
    return convs + ((49 * c2 + 1) * h + (h + 1) * 10 if h else (49 * c2 + 1) * 10)


@register("cnn", "conv net: 2x (3x3 conv + ReLU + 2x2 max-pool), 16/32 channels, "
                 "Linear(1568, 128) + ReLU, linear head; adam with a one-cycle lr "
                 "schedule peaking at 3e-3",
          recipe={"lr": 3e-3, "schedule": "onecycle", "arch": CNN_ARCH})
def cnn(config):
    """(B, 1, 28, 28) -> conv 1->16 -> pool -> conv 16->32 -> pool -> Linear(1568, 128)
    -> ReLU -> Linear(128, 10); defined in tapegrad/train/cnn.py (issues 6 and 17)."""
    from .cnn import MnistCNN
    arch = cnn_arch(config)
    return MnistCNN(channels=tuple(arch["channels"]), hidden=arch["hidden"])
