"""A training result's findings: every epoch's figures, the timed one, the all-reduce measured,
and the GPUs sampled. Kept at the top of the result JSON, as every result before kinds."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Optional

from jobs.core.result import Result, floats_back


@dataclass
class EpochStats:
    epoch: int  # 1-based
    epoch_s: float  # wall time of the whole epoch, data loading included (the homework's Q2 figure)
    train_s: float  # the steps' copies and compute (h2d_s + compute_s): the epoch with its data ready (Q1's figure)
    images: int  # images this epoch, all ranks together
    images_per_s: float
    loss: float  # mean training loss over the epoch, all ranks
    accuracy: float  # training accuracy over the epoch, all ranks, 0..1
    lr: float  # learning rate at the end of the epoch
    data_wait_s: float  # blocked on the data loader
    h2d_s: float  # host-to-device copies
    compute_s: float  # forward, backward, optimizer step (exposed communication included)
    comm_exposed_s: Optional[float] = None  # exposed all-reduce: comm.exposed_per_step_s x steps
    # The test set after the epoch (jobs.runtime.evaluate); None when not evaluated (test_images = 0, or
    # a result written before evaluation existed). eval_s is not part of epoch_s.
    test_loss: Optional[float] = None  # mean cross-entropy over the test images
    test_accuracy: Optional[float] = None  # top-1, 0..1
    test_images: Optional[int] = None  # images evaluated, all ranks together (each once)
    eval_s: Optional[float] = None  # wall seconds the evaluation took


@dataclass
class Timed:
    """The figure the homework asks for, so the collector never guesses."""

    epoch: int
    epoch_s: float  # Q2: the whole epoch
    train_s: float  # Q1: without waiting on data


@dataclass
class CommStats:
    world_size: int
    grad_bytes: int  # bytes of gradients all-reduced per step (fp32)
    allreduce_s: float  # one all-reduce of grad_bytes, mean of back-to-back runs
    algbw_gbps: float  # grad_bytes / allreduce_s / 1e9
    busbw_gbps: float  # algbw x 2(N-1)/N, as nccl-tests define it
    backend: str
    exposed_per_step_s: Optional[float] = None  # step time with all-reduce minus without (no_sync)
    sizes: list[dict[str, float]] = field(default_factory=list)  # the same figures per buffer size


@dataclass
class TrainBody:
    """What a training run found (the result's Body for the training kind)."""

    epochs: list[EpochStats] = field(default_factory=list)
    timed: Optional[Timed] = None
    comm: Optional[CommStats] = None
    gpu_util: Optional[dict[str, Any]] = None  # jobs.runtime.gpu_monitor's summary of the timed epoch

    @classmethod
    def keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Optional[TrainBody]:
        """Every field's type checked; NaN and infinities back from their strings. None when the
        run recorded nothing (a failed or OOM run)."""
        if "epochs" in data and not isinstance(data["epochs"], list):
            raise TypeError(f"epochs must be a list, got {data['epochs']!r}")
        for name in ("timed", "comm", "gpu_util"):
            if data.get(name) is not None and not isinstance(data[name], dict):
                raise TypeError(f"{name} must be an object or null, got {data[name]!r}")
        if not all(isinstance(e, dict) for e in data.get("epochs") or []):
            raise TypeError("epochs must be a list of objects")
        comm = CommStats(**floats_back(data["comm"])) if data.get("comm") else None
        if comm is not None:
            comm.sizes = [floats_back(size) if isinstance(size, dict) else size for size in comm.sizes]
        body = cls(epochs=[EpochStats(**floats_back(e)) for e in data.get("epochs") or []],
                   timed=Timed(**floats_back(data["timed"])) if data.get("timed") else None, comm=comm,
                   gpu_util=floats_back(data["gpu_util"]) if data.get("gpu_util") else None)
        return body if body != cls() else None


def train_body(result: Result) -> TrainBody:
    """A training result's findings; empty for a run that recorded none (failed, oom)."""
    body = result.body
    if body is None:
        return TrainBody()
    if not isinstance(body, TrainBody):
        raise TypeError(f"cell {result.cell_id} is not a training result")
    return body
