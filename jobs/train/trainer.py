"""What jobs/train.py asks of a pipeline's trainer (faithful.FaithfulTrainer, fast.FastTrainer)."""
from __future__ import annotations

from typing import Any, Optional, Protocol

import torch
from torch import nn

from jobs.train.cell import Cell
from jobs.runtime.evaluate import Evaluation
from jobs.runtime.launch import Placement
from jobs.train.result import EpochStats


class Trainer(Protocol):
    cell: Cell
    place: Placement
    device: torch.device
    model: nn.Module  # the plain model (its parameters are the gradients all-reduced)
    steps: int  # optimizer steps per epoch on each rank

    @property
    def compiled(self) -> bool:
        """The step runs the model through torch.compile."""

    @property
    def cuda_graph(self) -> bool:
        """The step replays a captured CUDA graph."""

    @property
    def graph_error(self) -> Optional[str]:
        """Why capturing the step failed (it then runs eagerly), or None."""

    def probe(self) -> None:
        """One full-size step that leaves no trace: where a batch too big runs out of memory."""

    def train_epoch(self, epoch: int) -> EpochStats:
        """Train one epoch (1-based) and time it."""

    def evaluate_test(self) -> Optional[Evaluation]:
        """Loss and accuracy over the cell's test images, each rank its own shard, every rank
        getting the whole set's figures; None when the cell evaluates none (test_images = 0).
        Called between epochs, never inside one's timed window."""

    def exposed_comm_per_step(self) -> Optional[float]:
        """Seconds per step the gradient all-reduce adds; None unless DDP on 2+ ranks."""

    def state(self) -> dict[str, Any]:
        """What a checkpoint holds."""

    def load(self, state: dict[str, Any]) -> None:
        """Resume from state()."""
