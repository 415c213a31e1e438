"""The fast pipeline: the same model, optimizer and schedule, with the launch overhead gone.

- The training set lives on the GPU as uint8; each epoch is shuffled, cropped and flipped
  by a few whole-tensor operations (RandomCrop(32, padding=4) with zero fill, flip p=0.5).
- bf16 autocast (when the cell says so), channels_last, and SGD as one fused kernel.
- One training step (forward, backward, gradient all-reduce, SGD) is captured once as a
  CUDA graph and replayed: a step costs one launch instead of hundreds. Under DDP the
  gradients are copied into one flat buffer, so the exchange is one NCCL all-reduce per step.
- Every step has the full batch: the epoch's last batch is topped up with repeated images
  whose loss weight is 0 (as DistributedSampler repeats images to even out ranks), so the
  gradient is exactly the mean over the real images.
On a CPU (tests), or if capture fails, the same step runs eagerly.
"""
from __future__ import annotations

import contextlib
import math
import time
from pathlib import Path
from typing import Any, Optional

import torch
import torch.distributed as dist
import torch.nn.functional as F

from jobs.runtime import comm, reuse
from jobs.train.cell import Cell
from jobs.runtime.data import MEAN, STD, open_train_set
from jobs.runtime.evaluate import Evaluation, batches, evaluate, share_buffers
from jobs.train.common import autocast, epoch_stats
from jobs.runtime.device import sync_device
from jobs.runtime.launch import Placement
from jobs.train.model import build_model
from jobs.train.pipeline import resident_test_set
from jobs.train.result import EpochStats
from jobs.train.schedule import lr_at
from jobs.runtime.timing import no_host_sync
from jobs.runtime.optim import sgd_step

MEMORY_FORMAT = torch.channels_last  # cuDNN's tensor-core convolutions want NHWC




def augment(images: torch.Tensor, generator: torch.Generator) -> torch.Tensor:
    """Random 32x32 crops of the 4-pixel zero-padded images, each flipped with p=0.5."""
    n = images.shape[0]
    padded = F.pad(images, (4, 4, 4, 4))
    dy = torch.randint(0, 9, (n,), device=images.device, generator=generator)
    dx = torch.randint(0, 9, (n,), device=images.device, generator=generator)
    span = torch.arange(32, device=images.device)
    rows = (dy[:, None] + span)[:, None, :, None].expand(n, 3, 32, 40)
    out = padded.gather(2, rows)
    cols = (dx[:, None] + span)[:, None, None, :].expand(n, 3, 32, 32)
    out = out.gather(3, cols)
    flip = torch.rand(n, device=images.device, generator=generator) < 0.5
    return torch.where(flip[:, None, None, None], out.flip(3), out)


class ResidentData:
    """This rank's share of each epoch, prepared on the device in one go."""

    def __init__(self, cell: Cell, data_dir: Path, device: torch.device, place: Placement, batch: int) -> None:
        dataset = open_train_set(cell, data_dir)
        n = min(cell.train_images, len(dataset.data))
        self.images = torch.from_numpy(dataset.data[:n]).to(device).permute(0, 3, 1, 2).contiguous()
        self.labels = torch.tensor(dataset.targets[:n], device=device)
        self.cell, self.place, self.batch, self.device = cell, place, batch, device
        self.steps = math.ceil(n / (batch * place.world_size))
        self.mean = torch.tensor(MEAN, device=device).view(1, 3, 1, 1) * 255
        self.std = torch.tensor(STD, device=device).view(1, 3, 1, 1) * 255

    def epoch(self, epoch: int, dtype: torch.dtype):
        """(images, labels, weights), each shaped [steps, batch, ...]; the same shuffle on every rank."""
        generator = torch.Generator(self.device).manual_seed(self.cell.run_seed * 100_003 + epoch)
        n = self.images.shape[0]
        total = self.steps * self.batch * self.place.world_size
        order = torch.randperm(n, device=self.device, generator=generator)
        order = torch.cat([order, order[: total - n]]) if total > n else order
        weights = (torch.arange(total, device=self.device) < n).float()
        mine = slice(self.place.rank, total, self.place.world_size)  # as DistributedSampler shards
        index, weights = order[mine], weights[mine]
        images = augment(self.images[index], generator).float().sub_(self.mean).div_(self.std)
        images = images.to(dtype).contiguous(memory_format=MEMORY_FORMAT)
        shape = (self.steps, self.batch)
        return images.view(*shape, 3, 32, 32), self.labels[index].view(shape), weights.view(shape)


class FastTrainer:
    def __init__(self, cell: Cell, place: Placement, device: torch.device, data_dir: Path) -> None:
        self.cell, self.place, self.device = cell, place, device
        torch.manual_seed(cell.run_seed)
        self.model = build_model(cell.model).to(device, memory_format=MEMORY_FORMAT)  # type: ignore[call-overload]  # stubs lack it
        # Inductor fuses BatchNorm and the elementwise ops (native channels_last BatchNorm
        # kernels were over a third of a step's GPU time); compiling happens in probe().
        # combo_kernels also launches independent small kernels together: 1.5% per step on an H200.
        self.step_model = torch.compile(self.model, options={"combo_kernels": True}) if device.type == "cuda" else self.model
        if self.step_model is not self.model:
            reuse.used_compile()
        if place.world_size > 1:  # every rank starts from rank 0's weights, as DDP would
            for tensor in self.model.state_dict().values():
                dist.broadcast(tensor, 0)
        self.params = [p for p in self.model.parameters()]
        self.flat = torch.zeros(sum(p.numel() for p in self.params), device=device)
        self.flat_grads, offset = [], 0
        for p in self.params:  # views of one flat buffer, in each parameter's own layout
            self.flat_grads.append(self.flat[offset: offset + p.numel()].as_strided(p.shape, p.stride()))
            offset += p.numel()
        self.bufs = [torch.zeros_like(p) for p in self.params]
        self.data = ResidentData(cell, data_dir, device, place, cell.batch_per_gpu)
        self.steps = self.data.steps
        self.dtype = torch.bfloat16 if cell.precision == "bf16" else torch.float32
        b = cell.batch_per_gpu
        self.x = torch.zeros(b, 3, 32, 32, device=device, dtype=self.dtype).contiguous(memory_format=MEMORY_FORMAT)
        self.y = torch.zeros(b, dtype=torch.long, device=device)
        self.w = torch.ones(b, device=device)
        self.lr = torch.tensor(cell.lr, device=device)
        self.totals = torch.zeros(3, dtype=torch.float64, device=device)
        self.graphs: dict[bool, torch.cuda.CUDAGraph] = {}
        self.graph_error: Optional[str] = None
        self.test = resident_test_set(cell, data_dir, device, place.rank, place.world_size, MEMORY_FORMAT)

    @property
    def compiled(self) -> bool:
        return self.step_model is not self.model

    @property
    def cuda_graph(self) -> bool:
        return bool(self.graphs)

    def _body(self, sync: bool = True) -> None:
        for p in self.params:  # backward writes fresh gradients: no zeroing, no accumulating
            p.grad = None
        with autocast(self.cell, self.device, cache_enabled=False):
            logits = self.step_model(self.x)
            losses = F.cross_entropy(logits, self.y, reduction="none")
        n = self.w.sum()
        loss = (losses.float() * self.w).sum() / n
        loss.backward()
        grads = [p.grad for p in self.params]
        if self.place.world_size > 1:  # one all-reduce of all gradients
            torch._foreach_copy_(self.flat_grads, grads)
            grads = self.flat_grads
            if sync:
                dist.all_reduce(self.flat)
                self.flat.div_(self.place.world_size)
        with torch.no_grad():
            sgd_step(self.params, grads, self.bufs, self.lr, self.cell.momentum, self.cell.weight_decay)
            hits = ((logits.argmax(1) == self.y).float() * self.w).sum()
            self.totals += torch.stack([loss.detach() * n, hits, n]).double()

    def probe(self) -> None:
        """Warm up, capture the step graphs (this is where a batch too big runs out of
        memory), then put weights and momentum back as they were."""
        saved = [t.detach().clone() for t in self.model.state_dict().values()]
        stream = torch.cuda.Stream() if self.device.type == "cuda" else None
        with torch.cuda.stream(stream) if stream else contextlib.nullcontext():
            for _ in range(3):
                self._body()
        if stream is not None:
            torch.cuda.current_stream().wait_stream(stream)
            self._capture()
        with torch.no_grad():
            for tensor, value in zip(self.model.state_dict().values(), saved, strict=True):
                tensor.copy_(value)
            for buf in self.bufs:
                buf.zero_()
        self.totals.zero_()

    def _capture(self) -> None:
        try:
            pool = None
            for sync in (True, False) if self.place.world_size > 1 else (True,):
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph, pool=pool):
                    self._body(sync)
                pool = graph.pool()
                self.graphs[sync] = graph
        except RuntimeError as exc:
            if "out of memory" in str(exc).lower():
                raise
            self.graphs.clear()
            self.graph_error = str(exc).splitlines()[0]
        torch.cuda.synchronize(self.device)

    def _run_step(self, sync: bool = True) -> None:
        graph = self.graphs.get(sync)
        graph.replay() if graph is not None else self._body(sync)

    def train_epoch(self, epoch: int) -> EpochStats:
        self.model.train()
        self.totals.zero_()
        sync_device(self.device)
        start = time.perf_counter()
        images, labels, weights = self.data.epoch(epoch, self.dtype)
        sync_device(self.device)
        prepared = time.perf_counter()
        with no_host_sync(self.device):
            for step in range(self.steps):
                lr = lr_at(self.cell, epoch - 1 + step / self.steps)
                self.lr.fill_(lr)
                self.x.copy_(images[step])
                self.y.copy_(labels[step])
                self.w.copy_(weights[step])
                self._run_step()
        sync_device(self.device)
        end = time.perf_counter()
        phases = {"data_wait": prepared - start, "compute": end - prepared}
        return epoch_stats(epoch, end - start, self.totals.clone(), lr, phases, self.place.world_size)

    def evaluate_test(self) -> Evaluation | None:
        """This rank's resident shard of the test images through the eager model in eval mode
        (BatchNorm's running statistics, rank 0's on every rank), in the cell's precision; the
        figures are the whole test set's."""
        if self.test is None:
            return None
        share_buffers(self.model)
        with autocast(self.cell, self.device):
            return evaluate(self.model, batches(*self.test), self.device)

    def exposed_comm_per_step(self) -> float | None:
        """Replays of the step with and without its all-reduce (comm.exposed_per_step)."""
        if self.place.world_size < 2 or self.device.type != "cuda":
            return None
        return comm.exposed_per_step(self._run_step, self.device, self.steps)

    def state(self) -> dict[str, Any]:
        return {"model": self.model.state_dict(), "momentum": [b.clone() for b in self.bufs]}

    def load(self, state: dict[str, Any]) -> None:
        with torch.no_grad():
            for name, tensor in self.model.state_dict().items():
                tensor.copy_(state["model"][name])
            for buf, saved in zip(self.bufs, state["momentum"], strict=True):
                buf.copy_(saved)

