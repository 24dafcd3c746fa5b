"""The demo's CNN. Layers come from hookgrad.nn; any that this build lacks is replaced by a
stand-in on nn.functional, with a note, so the demo still runs."""
from __future__ import annotations

import math
from typing import Any, Dict

import hookgrad
from hookgrad import nn

from .optional import Notes


def _stand_ins() -> Dict[str, Any]:
    functional = nn.functional

    def uniform(shape, fan_in):
        bound = 1 / math.sqrt(fan_in)
        return nn.Parameter(hookgrad.rand(*shape) * (2 * bound) - bound)

    class Conv2d(nn.Module):
        def __init__(self, in_channels, out_channels, kernel_size, padding=0):
            super().__init__()
            fan_in = in_channels * kernel_size * kernel_size
            self.weight = uniform((out_channels, in_channels, kernel_size, kernel_size), fan_in)
            self.bias = uniform((out_channels,), fan_in)
            self.padding = padding

        def forward(self, x):
            return functional.conv2d(x, self.weight, self.bias, padding=self.padding)

    class Linear(nn.Module):
        def __init__(self, in_features, out_features):
            super().__init__()
            self.weight = uniform((out_features, in_features), in_features)
            self.bias = uniform((out_features,), in_features)

        def forward(self, x):
            return functional.linear(x, self.weight, self.bias)

    class ReLU(nn.Module):
        def forward(self, x):
            return functional.relu(x)

    class MaxPool2d(nn.Module):
        def __init__(self, kernel_size):
            super().__init__()
            self.kernel_size = kernel_size

        def forward(self, x):
            return functional.max_pool2d(x, self.kernel_size)

    return {"Conv2d": Conv2d, "Linear": Linear, "ReLU": ReLU, "MaxPool2d": MaxPool2d}


def layer_classes(notes: Notes) -> Dict[str, Any]:
    classes = {}
    stand_ins = None
    for name in ("Conv2d", "Linear", "ReLU", "MaxPool2d"):
        cls = getattr(nn, name, None)
        if cls is None:
            stand_ins = stand_ins or _stand_ins()
            cls = stand_ins[name]
            notes.add(f"hookgrad.nn.{name} is not in this build: using a stand-in built on "
                      "hookgrad.nn.functional")
        classes[name] = cls
    return classes


class DigitsCNN(nn.Module):
    """conv(1->8) relu pool | conv(8->16) relu pool | linear(64->64) relu | linear(64->10)."""

    def __init__(self, layers: Dict[str, Any]) -> None:
        super().__init__()
        self.conv1 = layers["Conv2d"](1, 8, 3, padding=1)
        self.relu1 = layers["ReLU"]()
        self.pool1 = layers["MaxPool2d"](2)
        self.conv2 = layers["Conv2d"](8, 16, 3, padding=1)
        self.relu2 = layers["ReLU"]()
        self.pool2 = layers["MaxPool2d"](2)
        self.fc1 = layers["Linear"](64, 64)
        self.relu3 = layers["ReLU"]()
        self.fc2 = layers["Linear"](64, 10)

    def forward(self, x):
        x = self.pool1(self.relu1(self.conv1(x)))
        x = self.pool2(self.relu2(self.conv2(x)))
        x = self.relu3(self.fc1(x.flatten(1)))
        return self.fc2(x)


def build(seed: int, notes: Notes) -> DigitsCNN:
    hookgrad.manual_seed(seed)
    return DigitsCNN(layer_classes(notes))
