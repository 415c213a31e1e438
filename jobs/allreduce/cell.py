"""The AllreduceCell: one placement of ranks (nodes x GPUs, or CPU ranks under gloo) and the sweep
of message sizes it times, as nccl-tests' all_reduce_perf does.

No torch here: the orchestrator builds and checks cells on a login node.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, ClassVar
from collections.abc import Mapping

from jobs.core.bandwidth import DDP_BUCKET_BYTES, FP32_BYTES, RESNET18_GRADIENT_BYTES as GRADIENT_BYTES, bytes_text
from jobs.core.cell import CellError, RanksOnGPUs, cell_fields, check_choice, content_id

KIND = "allreduce"
BACKENDS = ("nccl", "gloo")
FACTORS = (2, 4)
MAX_BUFFER_BYTES = 2**34  # 16 GiB: one buffer per rank must fit its GPU (or host) memory
# estimate_s's nominal link: seconds per all-reduce = latency + 2 x bytes / bandwidth
NOMINAL = {"cuda": (20e-6, 20e9), "cpu": (100e-6, 1e9)}  # (latency s, bytes/s)
STARTUP_S = 10.0  # starting the ranks and their process group


@dataclass(frozen=True)
class AllreduceCell(RanksOnGPUs):
    """Ranks: gpus_per_node per node (one rank per GPU), or cpu_ranks_per_node CPU processes
    (backend gloo, gpus_per_node = 0). Sizes: min_bytes, min_bytes x factor, ... up to max_bytes,
    plus ResNet-18's gradient and DDP's 25 MiB bucket, always. Buffers are fp32, so min_bytes and
    max_bytes are rounded up to a multiple of 4 bytes (7 -> 8): a cell of 7 is the cell of 8."""

    kind: ClassVar[str] = KIND
    backend: str = "nccl"  # nccl: GPUs only; gloo: CPU ranks (or GPU buffers through the host)
    nodes: int = 1
    gpus_per_node: int = 2  # one rank per GPU; 0: CPU ranks (cpu_ranks_per_node)
    cpu_ranks_per_node: int = 0  # with gpus_per_node = 0 and backend gloo
    min_bytes: int = 8
    max_bytes: int = 2**30
    factor: int = 2  # the sweep's step: each size is the last x factor
    warmup: int = 5  # untimed all-reduces per size
    iters: int = 20  # timed all-reduces per size, back to back, one sync at the end
    repeat: int = 0  # distinguishes repeats of the same configuration

    def __post_init__(self) -> None:
        check_choice("backend", self.backend, BACKENDS)
        for f in dataclasses.fields(self):
            if f.name != "backend":
                _whole(f.name, getattr(self, f.name))
        _check_ranks(self)
        _check_sizes(self)
        for name in ("min_bytes", "max_bytes"):  # fp32 buffers: whole elements
            object.__setattr__(self, name, -(-getattr(self, name) // FP32_BYTES) * FP32_BYTES)
        if self.min_bytes > self.max_bytes:
            raise CellError(f"min_bytes ({self.min_bytes}) must be <= max_bytes ({self.max_bytes}); swap them")

    @property
    def cpus_per_task(self) -> int:
        return 2  # the rank and its communication thread (NCCL's proxy, gloo's)

    @property
    def device(self) -> str:
        return "cuda" if self.gpus_per_node else "cpu"

    def sizes(self) -> tuple[int, ...]:
        """Every size timed, ascending: the sweep, ResNet-18's gradient and DDP's bucket (once each)."""
        sweep, n = [], self.min_bytes
        while n <= self.max_bytes:
            sweep.append(n)
            n *= self.factor
        return tuple(sorted(set(sweep) | {GRADIENT_BYTES, DDP_BUCKET_BYTES}))

    @property
    def cell_id(self) -> str:
        return content_id(self.to_dict())

    @property
    def label(self) -> str:
        """"allreduce-nccl-4g-r0", "allreduce-nccl-2x2g-r0", "allreduce-gloo-2cpu-r1"; not unique (the id is)."""
        shape = f"{self.nodes}x{self.tasks_per_node}" if self.nodes > 1 else str(self.tasks_per_node)
        return f"allreduce-{self.backend}-{shape}{'g' if self.gpus_per_node else 'cpu'}-r{self.repeat}"

    def plan_columns(self) -> dict[str, str]:
        return {"ranks": f"{ranks_text(self.nodes, self.gpus_per_node, self.tasks_per_node)}, {self.backend}",
                "sizes": f"{bytes_text(self.min_bytes)} .. {bytes_text(self.max_bytes)} x{self.factor} "
                         f"+ gradient + bucket: {len(self.sizes())}",
                "iterations": f"{self.warmup} warm-up + {self.iters} timed per size"}

    def estimate_s(self, images_per_s_per_gpu: float) -> float:
        """Seconds, roughly (images_per_s_per_gpu does not apply): STARTUP_S + sum over sizes of
        (warmup + iters) x (latency + 2 x bytes / bandwidth), on a nominal link (NOMINAL)."""
        latency, bandwidth = NOMINAL[self.device]
        per_call = sum(latency + 2 * n / bandwidth for n in self.sizes())
        return STARTUP_S + (self.warmup + self.iters) * per_call

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, **dataclasses.asdict(self)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AllreduceCell:
        return cls(**cell_fields(cls, data))


def ranks_text(nodes: int, gpus_per_node: int, ranks_per_node: int) -> str:
    """"4 GPUs", "2 nodes x 2 GPUs", "2 CPU ranks", "2 nodes x 1 CPU rank"."""
    what = "GPU" if gpus_per_node else "CPU rank"
    per = f"{ranks_per_node} {what}{'s' if ranks_per_node != 1 else ''}"
    return f"{nodes} nodes x {per}" if nodes > 1 else per


def _whole(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise CellError(f"{name} must be a whole number, got {value!r}")


def _check_ranks(cell: AllreduceCell) -> None:
    for name in ("gpus_per_node", "cpu_ranks_per_node", "warmup", "repeat"):
        if getattr(cell, name) < 0:
            raise CellError(f"{name} must be >= 0, got {getattr(cell, name)}")
    if cell.nodes < 1:
        raise CellError(f"nodes must be >= 1, got {cell.nodes}")
    if cell.gpus_per_node and cell.cpu_ranks_per_node:
        raise CellError("give gpus_per_node (a rank per GPU) or cpu_ranks_per_node (CPU ranks, gloo), not both; "
                        f"got {cell.gpus_per_node} and {cell.cpu_ranks_per_node}")
    if cell.backend == "nccl" and not cell.gpus_per_node:
        raise CellError("backend 'nccl' runs on GPUs, but gpus_per_node = 0; give gpus_per_node >= 1, "
                        "or backend = \"gloo\" with cpu_ranks_per_node >= 1")
    if not cell.tasks_per_node:
        raise CellError("no ranks: give gpus_per_node >= 1, or cpu_ranks_per_node >= 1 with backend = \"gloo\"")
    if cell.ranks < 2:
        raise CellError(f"an all-reduce over {cell.ranks} rank moves nothing; give 2 or more ranks in all "
                        "(gpus_per_node or cpu_ranks_per_node >= 2, or nodes >= 2)")


def _check_sizes(cell: AllreduceCell) -> None:
    if cell.factor not in FACTORS:
        raise CellError(f"factor must be one of {list(FACTORS)} (the sweep's step), got {cell.factor}")
    if cell.min_bytes < 1:
        raise CellError(f"min_bytes must be >= 1 (rounded up to one fp32 element, 4 bytes), got {cell.min_bytes}")
    if cell.max_bytes > MAX_BUFFER_BYTES:
        raise CellError(f"max_bytes must be <= {MAX_BUFFER_BYTES} (16 GiB, a buffer per rank), got {cell.max_bytes}")
    if cell.iters < 1:
        raise CellError(f"iters must be >= 1 (timed all-reduces per size), got {cell.iters}")
