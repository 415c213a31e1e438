"""The results_dir fixture of the collect tests (test_tables, test_render)."""
from __future__ import annotations

from pathlib import Path

import pytest

from ._collect_data import DDP2_128, DDP2_32, DP2_32, DP4_32, SINGLE_128, SINGLE_32, bad_result, ok_result, write_plan_of
from jobs.result import write_result


@pytest.fixture
def results_dir(tmp_path: Path) -> Path:
    """1 GPU b32 (10 s, train 8 s) and b128 (5 s, train 4 s) ok; 2-GPU DDP b32 ok (6 s, train 5 s,
    0.5 s exposed all-reduce), b128 OOM; 4-GPU DP b32 failed;
    2-GPU DP b32 planned with no result."""
    write_plan_of(tmp_path, (SINGLE_32, SINGLE_128, DDP2_32, DDP2_128, DP4_32, DP2_32))
    write_result(tmp_path, ok_result(SINGLE_32, epoch_s=10.0, train_s=8.0))
    write_result(tmp_path, ok_result(SINGLE_128, epoch_s=5.0, train_s=4.0))
    write_result(tmp_path, ok_result(DDP2_32, epoch_s=6.0, train_s=5.0, comm_exposed_s=0.5))
    write_result(tmp_path, bad_result(DDP2_128, "oom", "CUDA out of memory"))
    write_result(tmp_path, bad_result(DP4_32, "failed", "Traceback\nRuntimeError: NCCL error"))
    return tmp_path
