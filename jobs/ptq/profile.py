"""Activation profiling, as the notebook's hooks do it, and the activation ranges it gives.

Forward pre-hooks record each weighted layer's input: for conv1 the image, for every later
layer the previous layer's output after its ReLU (and pool). A forward hook on fc3 records
its logits. So the six profiled tensors are: input, conv1, conv2, fc1, fc2 (each after ReLU
and pool where there is one) and fc3 (logits).

Calibration images are the first N of a seeded permutation of the training set, so the
first 16 of a 4000-image profile are the 16-image calibration: one profile serves every N.
"""
from __future__ import annotations

from dataclasses import dataclass

import torch

from jobs.core.cell import check_choice
from jobs.ptq.lenet import LAYERS, Net
from jobs.ptq.quantize import row_ranges
from jobs.ptq.choices import PERCENTILE, RANGE_METHODS

ACTIVATIONS = ("input",) + LAYERS
MSE_SAMPLE = 2 ** 18  # values an "mse" range search sees per tensor (the maximum always among them)


def calibration_indices(train_images: int, n: int, seed: int) -> torch.Tensor:
    """The first n of a seeded permutation of range(train_images)."""
    if n > train_images:
        raise ValueError(f"calibration_images ({n}) is more than the training set's {train_images} images")
    generator = torch.Generator().manual_seed(seed)
    return torch.randperm(train_images, generator=generator)[:n]


@dataclass(frozen=True)
class ActivationProfile:
    values: tuple[torch.Tensor, ...]  # one per ACTIVATIONS, [images, ...], on the net's device

    @property
    def images(self) -> int:
        return self.values[0].shape[0]

    def flat(self, index: int, n: int) -> torch.Tensor:
        """Activation `index`'s values over the first n images, flattened."""
        if n > self.images:
            raise ValueError(f"calibration asks {n} images; the profile holds {self.images}")
        return self.values[index][:n].reshape(-1)


@torch.no_grad()
def profile_activations(net: Net, images: torch.Tensor, batch: int = 1000) -> ActivationProfile:
    """Run `images` (normalised, on the net's device) through the float net and keep every
    profiled tensor."""
    kept: list[list[torch.Tensor]] = [[] for _ in ACTIVATIONS]
    hooks = []
    for k, name in enumerate(LAYERS):
        hooks.append(getattr(net, name).register_forward_pre_hook(
            lambda _m, args, k=k: kept[k].append(args[0].detach().clone())))
    hooks.append(net.layer("fc3").register_forward_hook(lambda _m, _a, out: kept[-1].append(out.detach().clone())))
    was_training = net.training
    net.eval()
    try:
        for start in range(0, images.shape[0], batch):
            net(images[start:start + batch])
    finally:
        for hook in hooks:
            hook.remove()
        net.train(was_training)
    return ActivationProfile(tuple(torch.cat(parts) for parts in kept))


def activation_ranges(profile: ActivationProfile, n: int, method: str, bits: int,
                      percentile: float = PERCENTILE) -> tuple[float, ...]:
    """The clipping range of each profiled tensor over the first n calibration images
    (quant.row_ranges; "mse" searches a fixed sample of each tensor's values)."""
    check_choice("activation_method", method, RANGE_METHODS)
    ranges = []
    for index in range(len(ACTIVATIONS)):
        values = profile.flat(index, n)
        if method == "mse":
            values = _sample(values, MSE_SAMPLE)
        ranges.append(float(row_ranges(values.view(1, -1), method, bits, percentile)[0]))
    return tuple(ranges)


def _sample(values: torch.Tensor, size: int) -> torch.Tensor:
    """A fixed pseudo-random sample of `size` values, with the largest |value| among them so the
    search sees the whole range."""
    if values.numel() <= size:
        return values
    generator = torch.Generator().manual_seed(0)
    index = torch.randint(0, values.numel(), (size - 1,), generator=generator).to(values.device)
    return torch.cat([values[index], values[values.abs().argmax()].view(1)])
