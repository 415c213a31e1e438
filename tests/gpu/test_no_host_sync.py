"""On a GPU: no timed step makes the CPU wait for the GPU, on every engine and pipeline.

Each cell runs as a job with JOBS_SYNC_DEBUG=error, so torch raises on any synchronizing
call inside the timed steps (jobs.runtime.timing.no_host_sync) and the job fails. Skipped without CUDA;
benchmarks/run_gpu.sh runs it first. torch's SyncBatchNorm syncs in every forward
(pytorch/pytorch#78549): sync_bn cells are not timing cells and are left out.
"""
from __future__ import annotations

import pytest
import torch

from jobs.train.cell import Cell
from jobs.core.result import read_result
from jobs.runtime.timing import SYNC_DEBUG_ENV, no_host_sync
from tests.helpers import run_job

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
GPUS = torch.cuda.device_count() if torch.cuda.is_available() else 0
SMALL = dict(dataset="synthetic", train_images=2048, epochs=2)


def cells() -> list[Cell]:
    many = max(1, min(GPUS, 4))
    return [
        Cell(engine="single", batch_per_gpu=128, **SMALL),
        Cell(engine="dp", gpus_per_node=many, batch_per_gpu=128, **SMALL),
        Cell(engine="ddp", gpus_per_node=many, batch_per_gpu=128, **SMALL),
        Cell(engine="single", batch_per_gpu=256, pipeline="fast", precision="bf16", **SMALL),
        Cell(engine="ddp", gpus_per_node=many, batch_per_gpu=256, pipeline="fast", precision="bf16", **SMALL),
    ]


def test_the_guard_catches_a_sync(monkeypatch):
    monkeypatch.setenv(SYNC_DEBUG_ENV, "error")
    with pytest.raises(RuntimeError, match="synchroniz"):
        with no_host_sync(torch.device("cuda", 0)):
            torch.ones(1, device="cuda").item()


@pytest.mark.parametrize("cell", cells(), ids=lambda c: f"{c.pipeline}-{c.label}")
def test_timed_steps_never_wait_for_the_gpu(tmp_path, cell):
    job = run_job(tmp_path, cell, {SYNC_DEBUG_ENV: "error"}, timeout=600)
    result = read_result(job.path)
    assert job.code == 0 and result.status == "ok", result.error
    fast = cell.pipeline == "fast"
    assert result.env["compiled"] is fast and result.env["cuda_graph"] is fast
    assert result.env["gpu_model"] != "cpu" and result.env["world_size"] == cell.nodes * cell.tasks_per_node
