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
from jobs.runtime.evaluate import shard


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


def resident_test_set(cell: Cell, data_dir: Path, device: torch.device, rank: int, world_size: int,
                      memory_format: torch.memory_format = torch.contiguous_format
                      ) -> Optional[tuple[torch.Tensor, torch.Tensor]]:
    """This rank's shard of the first cell.test_images test images (all of them if the set holds
    fewer), held on the device for the cell, or None when the cell evaluates nothing. Computed on
    the host with eval_transform's own operations (ToTensor's division by 255, then Normalize), so
    the images are those its loader would give, bit for bit; the evaluation after each epoch then
    waits on no loader worker (2 workers took 1.2-2.1 s per epoch for 10,000 images on an H100)."""
    if cell.test_images == 0:
        return None
    dataset = open_test_set(cell, data_dir)
    mine = shard(min(cell.test_images, len(dataset.data)), rank, world_size)
    images = torch.from_numpy(dataset.data[mine.start:mine.stop]).permute(0, 3, 1, 2).float().div(255)
    images = transforms.Normalize(MEAN, STD)(images)
    labels = torch.tensor(dataset.targets[mine.start:mine.stop])
    return images.to(device).contiguous(memory_format=memory_format), labels.to(device)


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
