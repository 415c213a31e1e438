"""The quantization notebook's LeNet-5-like network, and its CIFAR-10 input normalisation.

`Net` has no bias anywhere (61,770 weights); `NetWithBias` is the same with a bias on fc3 only.
Both run through `forward_layers`, the one description of the layer order (conv, ReLU,
pool; ...; fc3 logits) that the quantized simulation and the integer-only run also follow.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Optional

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

LAYERS = ("conv1", "conv2", "fc1", "fc2", "fc3")
NET_WEIGHTS = 61_770  # 450 + 2,400 + 48,000 + 10,080 + 840
MAX_FAN_IN = 400  # fc1's inputs: the longest dot product in the network

Layer = Callable[[str, torch.Tensor], torch.Tensor]


def forward_layers(x: torch.Tensor, layer: Layer, relu: Callable = F.relu,
                   pool: Optional[Callable] = None) -> torch.Tensor:
    """conv1 -> ReLU -> pool -> conv2 -> ReLU -> pool -> flatten -> fc1 -> ReLU -> fc2 -> ReLU -> fc3.
    `layer(name, x)` applies one weighted layer; relu and pool may be swapped for integer-safe ones."""
    if pool is None:
        pool = lambda t: F.max_pool2d(t, 2)  # noqa: E731
    for name in LAYERS:
        if name == "fc1":
            x = x.flatten(1)
        x = layer(name, x)
        if name != "fc3":
            x = relu(x)
        if name.startswith("conv"):
            x = pool(x)
    return x


class Net(nn.Module):
    """The notebook's Net: every layer bias=False."""

    fc3_bias = False

    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5, bias=False)
        self.conv2 = nn.Conv2d(6, 16, 5, bias=False)
        self.fc1 = nn.Linear(16 * 5 * 5, 120, bias=False)
        self.fc2 = nn.Linear(120, 84, bias=False)
        self.fc3 = nn.Linear(84, 10, bias=self.fc3_bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return forward_layers(x, lambda name, t: getattr(self, name)(t))

    def layer(self, name: str) -> nn.Conv2d | nn.Linear:
        return getattr(self, name)


class NetWithBias(Net):
    """The notebook's NetWithBias: the same network with a bias on fc3 only."""

    fc3_bias = True


def build(with_bias: bool, seed: int) -> Net:
    """A freshly initialised network; the seed fixes its weights without touching the global RNG."""
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        return NetWithBias() if with_bias else Net()


def normalise(pixels: np.ndarray | torch.Tensor, device: torch.device | str = "cpu") -> torch.Tensor:
    """uint8 images [N, 32, 32, 3] (CIFAR10.data) -> float32 [N, 3, 32, 32] in [-1, 1], computed as
    the notebook's ToTensor() then Normalize((0.5,)*3, (0.5,)*3): (p / 255 - 0.5) / 0.5."""
    pixels = torch.as_tensor(pixels).to(device)
    return pixels.permute(0, 3, 1, 2).float().div(255).sub(0.5).div(0.5).contiguous()


def resident(dataset, device: torch.device | str = "cpu", limit: int | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """A torchvision CIFAR10 (its first `limit` images) as (normalised images, int64 labels) on device."""
    n = len(dataset.data) if limit is None else min(limit, len(dataset.data))
    labels = torch.as_tensor(np.asarray(dataset.targets[:n]), dtype=torch.long).to(device)
    return normalise(dataset.data[:n], device), labels
