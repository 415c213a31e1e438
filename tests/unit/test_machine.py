"""orchestrator.local.machine: what this machine can run, for the local executor."""
from __future__ import annotations

import pytest

from jobs.train.cell import Cell
from orchestrator.local.machine import Machine, count_gpus, why_not_here

SMI = "GPU 0: NVIDIA H200 (UUID: GPU-1)\nGPU 1: NVIDIA H200 (UUID: GPU-2)\n"


@pytest.mark.parametrize("visible, expected", [(None, 2), ("0,1", 2), ("1", 1), ("", 0), ("1,7", 1), ("7,0", 0),
                                               ("GPU-1", 0)])
def test_gpus_are_those_nvidia_smi_lists_narrowed_as_cuda_narrows_them(visible, expected):
    assert count_gpus(SMI, visible) == expected


def test_no_nvidia_smi_output_is_no_gpu():
    assert count_gpus("", None) == 0


def test_a_cell_needing_more_gpus_than_the_machine_has_is_not_run_here():
    two = Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=8)
    why = why_not_here(two, Machine(gpus=1, cpus=16))
    assert why.startswith("needs 2 GPUs, this machine has 1; run it on SLURM")
    assert why_not_here(two, Machine(gpus=2, cpus=16)) == ""
    assert "needs 4 GPUs" in why_not_here(Cell(engine="ddp", nodes=2, gpus_per_node=2, batch_per_gpu=8),
                                          Machine(gpus=2, cpus=16)), "both nodes' ranks run here"


def test_without_gpus_a_gpu_is_a_process_as_long_as_there_are_cpus():
    two = Cell(engine="ddp", gpus_per_node=2, batch_per_gpu=8)
    assert why_not_here(two, Machine(gpus=0, cpus=2)) == ""
    assert why_not_here(Cell(engine="dp", gpus_per_node=4, batch_per_gpu=8), Machine(gpus=0, cpus=1)) == ""
    assert "needs 4 processes, this machine has 2 CPUs" in why_not_here(
        Cell(engine="ddp", gpus_per_node=4, batch_per_gpu=8), Machine(gpus=0, cpus=2))
