"""Cells and results, written the way jobs write them, for the collect tests."""
from __future__ import annotations

from pathlib import Path

from jobs.cell import Cell
from jobs.result import EpochStats, Result, Timed
from orchestrator.plan import build_plan, write_plan
from orchestrator.study import ClusterSpec, Study

SINGLE_32 = Cell(engine="single", batch_per_gpu=32)
SINGLE_128 = Cell(engine="single", batch_per_gpu=128)
DDP2_32 = Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=32)
DDP2_128 = Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=128)
DP4_32 = Cell(engine="dp", gpus_per_node=4, batch_per_gpu=32)
DP2_32 = Cell(engine="dp", gpus_per_node=2, batch_per_gpu=32)  # planned, never ran


def ok_result(cell: Cell, epoch_s: float, train_s: float, gpu: str = "H200", comm_exposed_s: float | None = None,
              epochs: int = 2) -> Result:
    """Epoch n (1-based) of `epochs`: the last takes epoch_s / train_s, earlier ones 5 s more;
    data wait = epoch_s - train_s, h2d 0.1 s, compute the rest; loss 2/n, accuracy 0.1 n."""
    stats = [
        EpochStats(n, s, t, cell.train_images, cell.train_images / s, 2.0 / n, 0.1 * n, 0.1, s - t, 0.1, t - 0.1,
                   comm_exposed_s)
        for n, s, t in ((n, epoch_s + (5 if n < epochs else 0), train_s + (5 if n < epochs else 0))
                        for n in range(1, epochs + 1))
    ]
    return Result(cell.cell_id, cell.to_dict(), "ok", env={"gpu_model": gpu}, epochs=stats,
                  timed=Timed(epochs, epoch_s, train_s))


def bad_result(cell: Cell, status: str, error: str) -> Result:
    return Result(cell.cell_id, cell.to_dict(), status, env={"gpu_model": "H200"}, error=error)


def write_plan_of(results_dir: Path, cells: tuple[Cell, ...]) -> None:
    study = Study("t", "", "data", ClusterSpec(), cells, "")
    write_plan(build_plan(study, results_dir, results_dir))
