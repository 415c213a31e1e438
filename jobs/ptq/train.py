"""Train the notebook's LeNet as the notebook does, fast.

The notebook: CrossEntropyLoss, SGD(lr=0.001, momentum=0.9), batch 4 from a shuffled
DataLoader, 2 epochs, inputs normalised to [-1, 1], no augmentation. Here the normalised
training set stays on the device as one tensor, and each epoch's batches are consecutive
slices of a seeded permutation: the same sampling as DataLoader(shuffle=True) (a fresh
permutation per epoch, every image once, the last batch short when N % 4 != 0).

One step (gather the batch, forward, backward, SGD) is one function. On a GPU it is captured
once as a CUDA graph that also advances its own batch cursor, so an epoch is N/4 replays and
no step waits for the host; elsewhere (or if capture fails) the same function runs eagerly.
The same seed gives the same run on the same kind of device (on CPU, bit for bit).
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Optional

import torch
import torch.nn.functional as F
from torch import nn

from jobs.runtime.optim import sgd_step
from jobs.runtime.device import sync_device


@dataclass(frozen=True)
class TrainSettings:
    """The notebook's training choices."""

    epochs: int = 2
    batch_size: int = 4
    lr: float = 0.001
    momentum: float = 0.9
    seed: int = 0  # the data order; the initial weights come from lenet.build(seed)

    def __post_init__(self) -> None:
        for name in ("epochs", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")


@dataclass(frozen=True)
class TrainReport:
    steps: int
    train_s: float  # wall seconds for all epochs (the device synchronised at both ends)
    epoch_losses: tuple[float, ...]  # mean training loss of each epoch
    cuda_graph: bool  # whether the step ran as a captured CUDA graph
    graph_error: Optional[str] = None  # why capture failed, when it did


class _Stepper:
    """Holds the step's state on the device: weights, momentum, the epoch's order and a cursor."""

    def __init__(self, net: nn.Module, images: torch.Tensor, labels: torch.Tensor, s: TrainSettings) -> None:
        self.net, self.images, self.labels, self.s = net, images, labels, s
        self.params = list(net.parameters())
        self.bufs = [torch.zeros_like(p) for p in self.params]  # SGD's momentum; zero = its first step
        device = images.device
        self.lr = torch.tensor(s.lr, device=device)
        self.order = torch.zeros(images.shape[0], dtype=torch.long, device=device)
        self.cursor = torch.zeros((), dtype=torch.long, device=device)
        self.offsets = torch.arange(s.batch_size, device=device)
        self.loss_sum = torch.zeros((), dtype=torch.float64, device=device)

    def step(self, batch: int) -> None:
        """Train on order[cursor*B : cursor*B + batch], then advance the cursor."""
        index = self.order.index_select(0, self.cursor * self.s.batch_size + self.offsets[:batch])
        x, y = self.images.index_select(0, index), self.labels.index_select(0, index)
        for p in self.params:
            p.grad = None
        loss = F.cross_entropy(self.net(x), y)
        loss.backward()
        with torch.no_grad():
            sgd_step(self.params, [p.grad for p in self.params], self.bufs, self.lr, self.s.momentum, 0.0)
            self.loss_sum += loss.detach().double() * batch
            self.cursor += 1

    def snapshot(self) -> list[torch.Tensor]:
        return [t.detach().clone() for t in self.params + self.bufs]

    def restore(self, saved: list[torch.Tensor]) -> None:
        with torch.no_grad():
            for t, v in zip(self.params + self.bufs, saved, strict=True):
                t.copy_(v)
            self.cursor.zero_()
            self.loss_sum.zero_()


def _capture(stepper: _Stepper) -> tuple[Optional[torch.cuda.CUDAGraph], Optional[str]]:
    """Warm up on a side stream, capture one full-batch step, and put the state back."""
    saved = stepper.snapshot()
    stepper.order.copy_(torch.arange(stepper.order.numel(), device=stepper.order.device))
    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    try:
        with torch.cuda.stream(stream):
            for _ in range(3):
                stepper.step(stepper.s.batch_size)
        torch.cuda.current_stream().wait_stream(stream)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            stepper.step(stepper.s.batch_size)
        error = None
    except RuntimeError as exc:  # fall back to eager steps, and say why
        graph, error = None, str(exc).splitlines()[0]
    torch.cuda.synchronize()
    stepper.restore(saved)
    return graph, error


def train(net: nn.Module, images: torch.Tensor, labels: torch.Tensor, settings: TrainSettings = TrainSettings(),
          use_graph: bool = True) -> TrainReport:
    """Train `net` (already on images.device) in place on normalised images [N, 3, 32, 32] and
    int64 labels [N], both resident on the device. Returns losses and wall time."""
    device = images.device
    threads = torch.get_num_threads()
    if device.type == "cpu":  # a batch of 4 is too small to share out; and one thread never waits on a busy core
        torch.set_num_threads(1)
    try:
        return _train(net, images, labels, settings, use_graph)
    finally:
        torch.set_num_threads(threads)


def _train(net: nn.Module, images: torch.Tensor, labels: torch.Tensor, settings: TrainSettings,
           use_graph: bool) -> TrainReport:
    n, b, device = images.shape[0], settings.batch_size, images.device
    net.train()
    stepper = _Stepper(net, images, labels, settings)
    full, rest = divmod(n, b)
    capture = use_graph and device.type == "cuda" and full >= 3  # the warm-up takes 3 full batches
    graph, error = _capture(stepper) if capture else (None, None)
    generator = torch.Generator(device).manual_seed(settings.seed)
    losses = []
    sync_device(device)
    start = time.perf_counter()
    for _ in range(settings.epochs):
        stepper.order.copy_(torch.randperm(n, device=device, generator=generator))
        stepper.cursor.zero_()
        stepper.loss_sum.zero_()
        for _ in range(full):
            if graph is not None:
                graph.replay()
            else:
                stepper.step(b)
        if rest:
            stepper.step(rest)
        losses.append(stepper.loss_sum.clone())  # read after the last epoch: no sync per epoch
    sync_device(device)
    train_s = time.perf_counter() - start
    epoch_losses = tuple(float(v) / n for v in torch.stack(losses).tolist())
    return TrainReport(settings.epochs * (full + (rest > 0)), train_s, epoch_losses, graph is not None, error)

