"""The homework's training loop: torchvision pipeline, torch.optim.SGD, and the engine
(one GPU, DataParallel, or DistributedDataParallel) wrapped around the model."""
from __future__ import annotations

import contextlib
import time
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from jobs.runtime import comm
from jobs.train.cell import Cell
from jobs.runtime.evaluate import Evaluation, batches, evaluate, share_buffers
from jobs.runtime.launch import Placement
from jobs.train.model import build_model
from jobs.train.pipeline import FaithfulPipeline, resident_test_set
from jobs.train.result import EpochStats
from jobs.train.schedule import lr_at
from jobs.runtime.timing import StepPhases, no_host_sync
from jobs.runtime.device import sync_device
from jobs.train.common import autocast, epoch_stats





def wrap_engine(model: nn.Module, cell: Cell, place: Placement, device: torch.device) -> nn.Module:
    if cell.engine == "dp" and device.type == "cuda":
        return nn.DataParallel(model, device_ids=list(range(cell.gpus_per_node)))
    if cell.engine == "ddp" and place.world_size > 1:
        # Named only when off: newer torch calls broadcast_buffers deprecated (its successor,
        # forward_sync_buffers, still syncs buffers at the start, and older torch lacks it).
        buffers: dict[str, Any] = {} if cell.broadcast_buffers else {"broadcast_buffers": False}
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="`broadcast_buffers` is deprecated", category=FutureWarning)
            return nn.parallel.DistributedDataParallel(
                model, device_ids=[device.index] if device.type == "cuda" else None,
                gradient_as_bucket_view=True,  # gradients live in the buckets: one copy fewer per step
                **buffers,
            )
    return model




class FaithfulTrainer:
    compiled = False  # eager, as the homework runs it
    cuda_graph = False
    graph_error = None

    def __init__(self, cell: Cell, place: Placement, device: torch.device, data_dir: Path) -> None:
        self.cell, self.place, self.device = cell, place, device
        torch.manual_seed(cell.run_seed)  # the weights; with no loader workers, the augmentation too
        model = build_model(cell.model)
        if cell.sync_bn and cell.engine == "ddp":
            model = nn.SyncBatchNorm.convert_sync_batchnorm(model)
        self.model = wrap_engine(model.to(device), cell, place, device)
        self.optimizer = torch.optim.SGD(
            self.model.parameters(), lr=cell.lr, momentum=cell.momentum, weight_decay=cell.weight_decay
        )
        self.batch_size = cell.batch_per_gpu * (cell.gpus_per_node if cell.engine == "dp" else 1)
        self.pipeline = FaithfulPipeline(
            cell, data_dir, self.batch_size, place.rank, place.world_size, pin=device.type == "cuda"
        )
        self.steps = len(self.pipeline)
        self.steps_run = 0  # training steps taken by this process (see _sync_guard)
        self.test = resident_test_set(cell, data_dir, device, place.rank, place.world_size)

    @property
    def plain_model(self) -> nn.Module:
        """The model inside the engine's wrapper (DataParallel, DDP)."""
        inner: nn.Module = getattr(self.model, "module", self.model)
        return inner

    def _autocast(self) -> torch.autocast:
        return autocast(self.cell, self.device)

    def _no_sync(self, skip: bool = True):
        if skip and isinstance(self.model, nn.parallel.DistributedDataParallel):
            return self.model.no_sync()
        return contextlib.nullcontext()

    def _sync_guard(self) -> contextlib.AbstractContextManager[None]:
        """The check that no step waits for the GPU, except in this process's first two steps
        under DDP on more than one rank: DDP rebuilds its gradient buckets once, in the forward
        after the first synchronised backward, and that rebuild synchronises (DDP's own, as in
        the homework's loop; once per run, also after a resume)."""
        ddp = isinstance(self.model, nn.parallel.DistributedDataParallel) and self.place.world_size > 1
        if ddp and self.steps_run < 2:
            return contextlib.nullcontext()
        return no_host_sync(self.device)

    def probe(self) -> None:
        """One full-size forward and backward (no gradient exchange), then forget it
        (BatchNorm's running statistics included). Not on a CPU: it has no GPU memory to run
        out of, and the step would cost as much as a training step; its images are drawn there
        too, so that the run's random stream (the augmentation's, without loader workers) is
        the one it always was."""
        images = torch.randn(self.batch_size, 3, 32, 32, device=self.device)
        if self.device.type != "cuda":
            return
        saved = {k: v.clone() for k, v in self.model.state_dict().items()}
        labels = torch.zeros(self.batch_size, dtype=torch.long, device=self.device)
        with self._no_sync(), self._autocast():
            nn.functional.cross_entropy(self.model(images), labels).backward()
        self.optimizer.zero_grad(set_to_none=True)
        self.model.load_state_dict(saved)

    def train_epoch(self, epoch: int) -> EpochStats:
        """One epoch (1-based). Waiting on the loader is host time; copies and compute are
        device time between CUDA events, so nothing in the loop waits for the GPU."""
        self.model.train()
        self.pipeline.set_epoch(epoch)
        sums = torch.zeros(2, dtype=torch.float64, device=self.device)  # loss sum, correct
        phases = StepPhases(self.device)
        wait, images_seen = 0.0, 0
        batches = iter(self.pipeline)
        sync_device(self.device)
        start = time.perf_counter()
        for step in range(self.steps):
            with self._sync_guard():
                before = time.perf_counter()
                images, labels = next(batches)
                wait += time.perf_counter() - before
                images_seen += labels.numel()  # counted on the host: the shape is known there
                phases.mark(new_step=True)
                images = images.to(self.device, non_blocking=True)
                labels = labels.to(self.device, non_blocking=True)
                phases.mark()
                lr = lr_at(self.cell, epoch - 1 + step / self.steps)
                self._step(images, labels, lr, sums)
                phases.mark()
            self.steps_run += 1
        sync_device(self.device)
        epoch_s = time.perf_counter() - start
        breakdown = {"data_wait": wait, "h2d": phases.between(0, 1), "compute": phases.between(1, 2)}
        totals = torch.cat([sums, torch.full((1,), float(images_seen), dtype=torch.float64, device=self.device)])
        return epoch_stats(epoch, epoch_s, totals, lr, breakdown, self.place.world_size)

    def evaluate_test(self) -> Evaluation | None:
        """This rank's shard of the test images through the plain model in eval mode (BatchNorm's
        running statistics, rank 0's on every rank); the figures are the whole test set's."""
        if self.test is None:
            return None
        model = self.plain_model
        share_buffers(model)
        with self._autocast():
            return evaluate(model, batches(*self.test), self.device)

    def _step(self, images, labels, lr: float, sums=None, sync: bool = True) -> None:
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        with self._no_sync(skip=not sync), self._autocast():
            logits = self.model(images)
            loss = nn.functional.cross_entropy(logits, labels)
        self.optimizer.zero_grad(set_to_none=True)
        with self._no_sync(skip=not sync):
            loss.backward()
        self.optimizer.step()
        if sums is not None:
            with torch.no_grad():  # stays on the device: no .item() in a step
                sums += torch.stack([loss.detach().double() * labels.numel(), (logits.argmax(1) == labels).sum().double()])

    def exposed_comm_per_step(self) -> float | None:
        """Seconds per step the gradient all-reduce adds, on one fixed batch (comm.exposed_per_step)
        the size of an epoch's first step: a whole batch, or this rank's images where it holds
        fewer (128 images over 2 ranks at batch 128: steps of 64). None unless DDP on 2+ ranks."""
        if not isinstance(self.model, nn.parallel.DistributedDataParallel):
            return None
        batch = min(self.batch_size, self.pipeline.images_per_rank)
        images = torch.randn(batch, 3, 32, 32, device=self.device)
        labels = torch.randint(0, 10, (batch,), device=self.device)
        return comm.exposed_per_step(lambda sync: self._step(images, labels, self.cell.lr, sync=sync), self.device, self.steps)

    def state(self) -> dict[str, Any]:
        return {"model": self.plain_model.state_dict(), "optimizer": self.optimizer.state_dict()}

    def load(self, state: dict[str, Any]) -> None:
        self.plain_model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
