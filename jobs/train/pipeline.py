"""The homework's input pipeline: torchvision transforms, loader workers, a sampler per rank."""
from __future__ import annotations

from pathlib import Path
from typing import Optional
from collections.abc import Iterator

import torch
from torch.utils.data import DataLoader, DistributedSampler, Subset
from torchvision import transforms

from jobs.train.cell import Cell
from jobs.runtime.data import MEAN, STD, open_test_set, open_train_set
from jobs.runtime.evaluate import EVAL_BATCH, shard


def train_transform() -> transforms.Compose:
    return transforms.Compose([
        transforms.RandomCrop(32, padding=4),
        transforms.RandomHorizontalFlip(),
        transforms.ToTensor(),
        transforms.Normalize(MEAN, STD),
    ])


def eval_transform() -> transforms.Compose:
    """The homework's test transform: no augmentation."""
    return transforms.Compose([transforms.ToTensor(), transforms.Normalize(MEAN, STD)])


def eval_loader(cell: Cell, data_dir: Path, rank: int, world_size: int, pin: bool) -> Optional[DataLoader]:
    """This rank's shard of the first cell.test_images test images (all of them if the set holds
    fewer), or None when the cell evaluates nothing. Workers are persistent, as the training
    loader's: forking them again after every epoch would cost seconds. A shard of one batch
    gets none: a worker would load it while the job waits for it anyway, and forking it (after
    the first epoch, as another rank's all-reduce of its figures arrives) risks CPython's fork
    deadlock (before 3.12, gh-112275)."""
    if cell.test_images == 0:
        return None
    dataset = open_test_set(cell, data_dir, eval_transform())
    mine = Subset(dataset, shard(min(cell.test_images, len(dataset)), rank, world_size))
    workers = cell.loader_workers if len(mine) > EVAL_BATCH else 0
    return DataLoader(mine, batch_size=EVAL_BATCH, shuffle=False, num_workers=workers,
                      persistent_workers=workers > 0, pin_memory=pin)


class FaithfulPipeline:
    """Batches on the host; the train loop copies them to the device.

    Workers are persistent and memory pinned: re-forking workers from a process that
    holds a CUDA/NCCL context costs seconds per epoch, which is overhead, not the recipe.
    """

    def __init__(self, cell: Cell, data_dir: Path, batch_size: int, rank: int, world_size: int, pin: bool) -> None:
        dataset = open_train_set(cell, data_dir, train_transform())
        if cell.train_images < len(dataset):
            dataset = Subset(dataset, range(cell.train_images))
        self.sampler: Optional[DistributedSampler] = None
        generator = torch.Generator().manual_seed(cell.run_seed)
        if world_size > 1:
            # set_epoch below reseeds the shuffle; without it every epoch repeats epoch 0's order
            self.sampler = DistributedSampler(dataset, world_size, rank, shuffle=True, seed=cell.run_seed)
        workers = cell.loader_workers
        self.loader = DataLoader(
            dataset, batch_size=batch_size, shuffle=self.sampler is None, sampler=self.sampler,
            # with a sampler, the workers' seeds come from torch's RNG, which the trainer seeded with run_seed
            generator=generator if self.sampler is None else None, num_workers=workers,
            persistent_workers=workers > 0, pin_memory=pin, drop_last=False,
        )

    def __len__(self) -> int:
        return len(self.loader)

    @property
    def images_per_rank(self) -> int:
        """This rank's images per epoch (its shard under DDP)."""
        return len(self.loader.sampler)  # type: ignore[arg-type]  # a sized sampler: random or distributed

    def set_epoch(self, epoch: int) -> None:
        if self.sampler is not None:
            self.sampler.set_epoch(epoch)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        return iter(self.loader)
