"""jobs.train.model: the ResNet-18 the homework names, the CIFAR-10 variant."""
from __future__ import annotations

import torch
from torch import nn

from jobs.train.model import ResNet18


def test_resnet18_is_the_cifar_variant_with_11173962_parameters():
    model = ResNet18()
    assert sum(p.numel() for p in model.parameters()) == 11_173_962
    assert model.conv1.kernel_size == (3, 3) and model.conv1.stride == (1, 1), "a 3x3 stem"
    assert not any(isinstance(m, nn.MaxPool2d) for m in model.modules()), "no max-pool"
    assert model(torch.zeros(2, 3, 32, 32)).shape == (2, 10)
