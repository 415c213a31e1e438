"""Test-set evaluation: one function for training runs and for quantized networks.

It runs outside timed windows: losses and hits are summed on the device, and read once at
the end. Under torch.distributed with more than one rank, each rank evaluates its own shard
(the caller splits the test set, e.g. DistributedSampler(shuffle=False)) and the sums are
all-reduced, so every rank returns the whole test set's figures.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Optional, Union
from collections.abc import Callable, Iterable

import torch
import torch.distributed as dist
import torch.nn.functional as F
from torch import nn

Model = Union[nn.Module, Callable[[torch.Tensor], torch.Tensor]]
Batches = Iterable[tuple[torch.Tensor, torch.Tensor]]
EVAL_BATCH = 1000  # images per forward: no gradients are kept, so far more than a training batch fits


@dataclass(frozen=True)
class Evaluation:
    loss: float  # mean cross-entropy over the images
    accuracy: float  # top-1, 0..1
    images: int
    correct: int
    predictions: Optional[torch.Tensor] = None  # int64 [images] on the CPU, when asked (this rank's shard)


def batches(images: torch.Tensor, labels: torch.Tensor, size: int = EVAL_BATCH) -> Batches:
    """Consecutive slices of a resident test set (views: nothing is copied)."""
    for start in range(0, images.shape[0], size):
        yield images[start:start + size], labels[start:start + size]


def shard(count: int, rank: int, world_size: int) -> range:
    """This rank's contiguous part of `count` images: sizes differ by at most one, and every
    image is in exactly one shard (DistributedSampler instead pads with repeats, which would
    be counted twice). Rank r holds [r x count // W, (r+1) x count // W)."""
    return range(rank * count // world_size, (rank + 1) * count // world_size)


def distributed() -> bool:
    return dist.is_available() and dist.is_initialized() and dist.get_world_size() > 1


@torch.no_grad()
def share_buffers(model: nn.Module) -> None:
    """Give every rank rank 0's buffers (BatchNorm's running statistics), as DDP does before
    each forward: each rank updated its own with its own last batches, and a sharded evaluation
    must be that of one model, the one rank 0 saves."""
    if distributed():
        for buffer in model.buffers():
            dist.broadcast(buffer, 0)


@torch.no_grad()
def evaluate(model: Model, data: Batches, device: torch.device | str, keep_predictions: bool = False) -> Evaluation:
    """Mean loss, top-1 accuracy and image count of `model` (a module, or any images -> logits
    callable) over `data`, batches of (images, labels) moved to `device` as needed.
    A module is put in eval mode for the pass and given back in the mode it had."""
    device = torch.device(device)
    was_training = isinstance(model, nn.Module) and model.training
    if isinstance(model, nn.Module):
        model.eval()
    totals = torch.zeros(2, dtype=torch.float64, device=device)  # loss sum, correct
    count, kept = 0, []
    try:
        for images, labels in data:
            images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
            logits = model(images)
            predicted = logits.argmax(1)
            loss = F.cross_entropy(logits.float(), labels, reduction="sum")
            totals += torch.stack([loss.double(), (predicted == labels).sum().double()])
            count += labels.numel()
            if keep_predictions:
                kept.append(predicted)
    finally:
        if was_training and isinstance(model, nn.Module):
            model.train()
    totals = torch.cat([totals, totals.new_full((1,), count)])
    if distributed():
        dist.all_reduce(totals)
    loss_sum, correct, images = totals.tolist()  # the one sync
    predictions = None
    if keep_predictions:
        predictions = torch.cat(kept).cpu() if kept else torch.zeros(0, dtype=torch.long)
    return Evaluation(loss=loss_sum / max(images, 1), accuracy=correct / max(images, 1), images=int(images),
                      correct=int(correct), predictions=predictions)
