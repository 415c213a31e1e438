"""Result files and results dirs built by hand, for the collect tests."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Optional, Sequence

from jobs.cell import Cell
from jobs.result import CommStats, EpochStats, Result, Timed

GPU = "NVIDIA H200"


def cell(engine: str = "single", b: int = 32, gpus: int = 1, nodes: int = 1, **fields) -> Cell:
    """A cell with `gpus` GPUs in all, spread over `nodes` nodes."""
    return Cell(engine=engine, batch_per_gpu=b, nodes=nodes, gpus_per_node=gpus // nodes, **fields)


def result(c: Cell, status: str = "ok", epoch_s: float = 10.0, train_s: float = 8.0, *,
           h2d_s: float = 0.5, compute_s: float = 7.0, comm_exposed_s: Optional[float] = None,
           busbw_gbps: Optional[float] = None, grad_bytes: int = 44_695_848,
           losses: Optional[Sequence[float]] = None, accuracies: Optional[Sequence[float]] = None,
           lrs: Optional[Sequence[float]] = None, gpu_model: str = GPU, error: Optional[str] = None) -> Result:
    """A result of `c`: its timed epoch takes epoch_s (train_s without data wait); other epochs
    take 1.5x (warm-up). comm is filled when busbw_gbps is given."""
    env = {"gpu_model": gpu_model, "gpus_visible": c.gpus_per_node, "driver": "550.54", "torch": "2.5.1",
           "cuda": "12.4", "cudnn": 90100, "nccl": "2.21.5", "python": "3.11.7", "hostnames": ["node1"],
           "started_at": "2025-04-01T10:00:00+00:00", "ended_at": "2025-04-01T10:05:00+00:00"}
    out = Result(cell_id=c.cell_id, cell=c.to_dict(), status=status, env=env, error=error)
    if status != "ok":
        out.error = error or f"{status}: by hand"
        return out
    for e in range(1, c.epochs + 1):
        scale = 1.0 if e == c.timed_epoch else 1.5
        out.epochs.append(EpochStats(
            epoch=e, epoch_s=epoch_s * scale, train_s=train_s * scale, images=c.train_images,
            images_per_s=c.train_images / (epoch_s * scale), loss=losses[e - 1] if losses else 2.0 / e,
            accuracy=accuracies[e - 1] if accuracies else 0.1 * e, lr=lrs[e - 1] if lrs else c.lr,
            data_wait_s=(epoch_s - train_s) * scale, h2d_s=h2d_s * scale, compute_s=compute_s * scale,
            comm_exposed_s=None if comm_exposed_s is None else comm_exposed_s * scale))
    out.timed = Timed(epoch=c.timed_epoch, epoch_s=epoch_s, train_s=train_s)
    if busbw_gbps is not None:
        n = c.gpus
        algbw = busbw_gbps / (2 * (n - 1) / n)
        out.comm = CommStats(world_size=n, grad_bytes=grad_bytes, allreduce_s=grad_bytes / algbw / 1e9,
                             algbw_gbps=algbw, busbw_gbps=busbw_gbps, backend="nccl")
    return out


def write_dir(path: Path, results: Iterable[Result], planned: Iterable[Cell] = (),
              submitted: Iterable[Cell] = (), study: str = "by-hand") -> Path:
    """A results dir: the result files, a plan.json listing `planned` (and every result's
    cell), and a registry.jsonl line for each of `submitted`."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    results = list(results)
    cells = {r.cell_id: r.cell for r in results}
    cells.update({c.cell_id: c.to_dict() for c in planned})
    for r in results:
        (path / f"{r.cell_id}.json").write_text(json.dumps(r.to_dict()))
    (path / "plan.json").write_text(json.dumps({"study": study, "cells": list(cells.values())}))
    lines = [json.dumps({"cell_id": c.cell_id, "executor": "slurm", "job_id": f"7_{i}", "array": "a",
                         "submitted_at": "2025-04-01T09:00:00+00:00"}) for i, c in enumerate(submitted)]
    (path / "registry.jsonl").write_text("".join(line + "\n" for line in lines))
    return path
