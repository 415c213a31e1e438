"""The collect tests' data: cells, their results and results dirs, built by hand and written
by the writers the orchestrator and the jobs use (plan.json, result files); and the mixed
results dir most collect tests read (mixed_results).
"""
from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Iterable, Optional, Sequence

from jobs.cell import Cell
from jobs.result import CommStats, EpochStats, Result, Timed, write_result
from orchestrator.plan import build_plan, write_plan
from orchestrator.study import ClusterSpec, Study

GPU = "NVIDIA H200"


def cell(engine: str = "single", b: int = 32, gpus: int = 1, nodes: int = 1, **fields) -> Cell:
    """A cell with `gpus` GPUs in all, spread over `nodes` nodes."""
    return Cell(engine=engine, batch_per_gpu=b, nodes=nodes, gpus_per_node=gpus // nodes, **fields)


def result(c: Cell, status: str = "ok", epoch_s: float = 10.0, train_s: float = 8.0, *,
           h2d_s: float = 0.5, compute_s: float = 7.0, comm_exposed_s: Optional[float] = None,
           busbw_gbps: Optional[float] = None, grad_bytes: int = 44_695_848,
           losses: Optional[Sequence[float]] = None, accuracies: Optional[Sequence[float]] = None,
           lrs: Optional[Sequence[float]] = None, gpu_model: str = GPU, error: Optional[str] = None,
           test_accuracies: Optional[Sequence[float]] = None) -> Result:
    """A result of `c`: its timed epoch takes epoch_s (train_s without data wait); other epochs
    take 1.5x (warm-up). comm is filled when busbw_gbps is given. With test_accuracies, each epoch
    has them over c.test_images images, test loss 2 x (1 - accuracy), 1 s of evaluation; without,
    none (as a result written before the job evaluated the test set)."""
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
        if test_accuracies:
            last = out.epochs[-1]
            last.test_accuracy, last.test_loss = test_accuracies[e - 1], 2 * (1 - test_accuracies[e - 1])
            last.test_images, last.eval_s = c.test_images, 1.0
    out.timed = Timed(epoch=c.timed_epoch, epoch_s=epoch_s, train_s=train_s)
    if busbw_gbps is not None:
        n = c.gpus
        algbw = busbw_gbps / (2 * (n - 1) / n)
        out.comm = CommStats(world_size=n, grad_bytes=grad_bytes, allreduce_s=grad_bytes / algbw / 1e9,
                             algbw_gbps=algbw, busbw_gbps=busbw_gbps, backend="nccl")
    return out


def write_dir(path: Path, results: Iterable[Result] = (), planned: Iterable[Cell] = (),
              submitted: Iterable[Cell] = (), study: str = "by-hand") -> Path:
    """A results dir: the result files, a plan.json listing every result's cell and `planned`,
    and a registry.jsonl line for each of `submitted`."""
    path = Path(path)
    path.mkdir(parents=True, exist_ok=True)
    results = list(results)
    cells = {r.cell_id: Cell.from_dict(r.cell) for r in results}
    cells.update({c.cell_id: c for c in planned})
    for r in results:
        write_result(path, r)
    write_plan(build_plan(Study(study, "", "data", ClusterSpec(), tuple(cells.values()), ""), path, path))
    lines = [json.dumps({"cell_id": c.cell_id, "executor": "slurm", "job_id": f"7_{i}", "array": "a",
                         "submitted_at": "2025-04-01T09:00:00+00:00"}) for i, c in enumerate(submitted)]
    (path / "registry.jsonl").write_text("".join(line + "\n" for line in lines))
    return path




def q4(b: int, **remedy) -> Cell:
    return cell("ddp", b, 4, epochs=5, timed_epoch=5, **remedy)


def mixed_results() -> list[Result]:
    """The mixed dir's results: ok cells (one with three repeats), oom, failed, timeout, pending (in the
    registry, no result) and missing (planned only), and Q4's 5-epoch runs.

    1 GPU   b32: 40 s (train 32)   b128: repeats 20/22/30 s (train 16/17/25) -> median 22 (17)
            b512, b2048: OOM       b8192: pending
    2 GPUs  DDP b32: 25 s (train 20; h2d 1, compute 16, exposed comm 2; busbw 40 GB/s)   DDP b128: failed
            DP  b32: 30 s (train 24)                                                      DP  b128: pending
    4 GPUs  DDP b32: 12.5 s (train 10; h2d 0.5, compute 8, exposed comm 1.5; busbw 50)   DDP b128: missing
            DP  b32: timeout                                                              DP  b128: not in study
    Q4 (5 epochs): 1 GPU b128 (loss 0.8, acc 0.70); 4 GPUs DDP b2048 none (1.6, 0.42), linear (1.5, 0.52),
            linear + 2 warmup (1.4, 0.62); b8192: OOM. Test accuracy after epoch 5: 0.68, 0.40, 0.50, 0.60
            (only Q4's runs recorded test figures: the others read as results from before test evaluation)
    Every other epoch takes 1.5x the timed one; the GPU is an NVIDIA H200.
    """
    single = [result(cell("single", 32), epoch_s=40.0, train_s=32.0)]
    single += [result(cell("single", 128, repeat=i), epoch_s=e, train_s=t)
               for i, (e, t) in enumerate([(20.0, 16.0), (22.0, 17.0), (30.0, 25.0)])]
    single += [result(cell("single", 512), status="oom"), result(cell("single", 2048), status="oom")]
    multi = [
        result(cell("ddp", 32, 2), epoch_s=25.0, train_s=20.0, h2d_s=1.0, compute_s=16.0, comm_exposed_s=2.0,
               busbw_gbps=40.0),
        result(cell("ddp", 128, 2), status="failed", error="Traceback ...\nRuntimeError: NCCL error"),
        result(cell("dp", 32, 2), epoch_s=30.0, train_s=24.0),
        result(cell("ddp", 32, 4), epoch_s=12.5, train_s=10.0, h2d_s=0.5, compute_s=8.0, comm_exposed_s=1.5,
               busbw_gbps=50.0),
        result(cell("dp", 32, 4), status="timeout"),
    ]
    large = [
        result(cell("single", 128, epochs=5, timed_epoch=5), losses=[2.0, 1.5, 1.2, 1.0, 0.8],
               accuracies=[0.3, 0.45, 0.55, 0.62, 0.70], test_accuracies=[0.35, 0.5, 0.58, 0.63, 0.68]),
        result(q4(2048), losses=[2.3, 2.1, 1.9, 1.7, 1.6], accuracies=[0.1, 0.2, 0.3, 0.38, 0.42],
               test_accuracies=[0.1, 0.18, 0.27, 0.33, 0.40]),
        result(q4(2048, lr_scaling="linear"), losses=[2.2, 2.0, 1.8, 1.6, 1.5],
               accuracies=[0.15, 0.25, 0.35, 0.48, 0.52], lrs=[6.4] * 5, test_accuracies=[0.12, 0.22, 0.3, 0.44, 0.5]),
        result(q4(2048, lr_scaling="linear", warmup_epochs=2), losses=[2.2, 2.0, 1.7, 1.5, 1.4],
               accuracies=[0.2, 0.3, 0.4, 0.58, 0.62], lrs=[3.25, 6.4, 6.4, 6.4, 6.4],
               test_accuracies=[0.18, 0.28, 0.38, 0.55, 0.6]),
        result(q4(8192), status="oom"),
    ]
    return single + multi + large


PENDING = (cell("single", 8192), cell("dp", 128, 2))
MISSING = (cell("ddp", 128, 4),)


def write_mixed(path: Path) -> Path:
    return write_dir(path, mixed_results(), planned=PENDING + MISSING, submitted=PENDING, study="mixed")


def copy_of(results_dir: Path, tmp_path: Path) -> Path:
    """A copy to change: the mixed dir is shared by a test module."""
    return Path(shutil.copytree(results_dir, tmp_path / "copy"))
