"""Q5-Q7's evidence for a DDP run on 2+ ranks (result.DDPEvidence): what DDP sends besides the
gradients, whether the sample order repeats without set_epoch, and how far the ranks' BatchNorm
statistics drift apart. All of it after (or beside) the epochs, never inside a timed step."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import torch
import torch.distributed as dist
from torch import nn
from torch.utils.data import DistributedSampler

from jobs.runtime import comm
from jobs.train.result import DDPEvidence
from jobs.train.trainer import Trainer


def tensor_bytes(tensors: Iterable[torch.Tensor]) -> int:
    """Bytes the tensors hold: sum of numel x element size (fp32 4, int64 8)."""
    return sum(t.numel() * t.element_size() for t in tensors)


def position_overlap(first: Sequence[int], second: Sequence[int]) -> float:
    """Share of positions i where first[i] == second[i] (the same sample at the same place in the order,
    whatever the batch: not the same step, which at one step an epoch every sample kept on the rank shares)."""
    return sum(a == b for a, b in zip(first, second, strict=True)) / len(first)


def order_overlaps(images: int, world_size: int, rank: int, seed: int) -> tuple[float, float]:
    """(without, with) set_epoch: position_overlap of this rank's DistributedSampler order in
    epochs 1 and 2, the sampler the faithful pipeline builds (shuffle, the run's seed). Without
    set_epoch its epoch stays 0 and the order repeats exactly (1.0); with set_epoch(1) and
    set_epoch(2), as the trainer calls it, the two shuffles agree only by chance (about 1/images
    per position). Index lists only: no image is read."""
    sampler: DistributedSampler[int] = DistributedSampler(range(images), world_size, rank, shuffle=True,  # type: ignore[arg-type]
                                                          seed=seed)
    without = position_overlap(list(sampler), list(sampler))
    sampler.set_epoch(1)
    epoch1 = list(sampler)
    sampler.set_epoch(2)
    return without, position_overlap(epoch1, list(sampler))


def batchnorm_layers(model: nn.Module) -> list[nn.modules.batchnorm._BatchNorm]:
    """The model's BatchNorm layers (SyncBatchNorm included) that keep running statistics."""
    return [m for m in model.modules()
            if isinstance(m, nn.modules.batchnorm._BatchNorm) and m.running_var is not None]


def rank_spread(per_layer: Sequence[torch.Tensor]) -> float:
    """DDPEvidence.bn_rank_spread from each layer's running_var of every rank, [world_size, channels]:
    max over layers of max over channels (max over ranks - min over ranks) / mean |value|.
    A layer whose values are all 0 counts 0."""
    spreads = [0.0]
    for v in per_layer:
        scale = v.abs().mean().item()
        if scale > 0:
            spreads.append((v.max(0).values - v.min(0).values).max().item() / scale)
    return max(spreads)


def gathered_spread(model: nn.Module, world_size: int) -> float:
    """rank_spread of the BatchNorm running_var every rank holds now: one all_gather of them all.
    Every rank must call it at the same point (a collective)."""
    layers = batchnorm_layers(model)
    if not layers:
        return 0.0
    mine = torch.cat([m.running_var.detach().float().flatten() for m in layers])  # type: ignore[union-attr]
    every = [torch.empty_like(mine) for _ in range(world_size)]
    dist.all_gather(every, mine)
    stacked = torch.stack(every).cpu()
    sizes = [m.running_var.numel() for m in layers]  # type: ignore[union-attr]
    return rank_spread(stacked.split(sizes, dim=1))


def ddp_evidence(trainer: Trainer, bn_spread: float | None) -> DDPEvidence:
    """The run's evidence; bn_spread as gathered_spread measured it after the last epoch. The fast
    pipeline has no DDP module: it exchanges gradients only, after one broadcast of the whole
    state (parameters and buffers) at the start."""
    cell, model = trainer.cell, trainer.model
    ddp = isinstance(model, nn.parallel.DistributedDataParallel)
    broadcast = ddp and cell.broadcast_buffers
    params, buffers = tensor_bytes(model.parameters()), tensor_bytes(model.buffers())
    without, with_epoch = order_overlaps(cell.train_images, trainer.place.world_size, trainer.place.rank, cell.run_seed)
    return DDPEvidence(
        world_size=trainer.place.world_size,
        grad_bytes=comm.gradient_bytes(model),
        buffer_bytes=buffers if broadcast else 0,
        init_bytes=params + (buffers if broadcast or not ddp else 0),
        broadcast_buffers=broadcast, steps_per_epoch=trainer.steps,
        order_overlap_without_set_epoch=without, order_overlap_with_set_epoch=with_epoch,
        bn_rank_spread=bn_spread)
