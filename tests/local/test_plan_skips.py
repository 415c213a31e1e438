"""On a machine without SLURM, `plan` says what the local executor will skip here and why: one
line per reason, whatever the number of cells, for every kind (orchestrator.local.machine decides, as
for `submit`)."""
from __future__ import annotations

import os

import pytest

from orchestrator.slurm import slurm_client
from orchestrator.cli import main
from tests.helpers import TINY_LOCAL, one_gpu_machine

NEEDS = "needs {} GPUs, this machine has 1; run it on SLURM"


@pytest.fixture
def one_gpu(tmp_path, monkeypatch):
    one_gpu_machine(tmp_path, monkeypatch)


def plan_lines(capsys, *args: str) -> list[str]:
    assert main(["plan", *args]) == 0
    return capsys.readouterr().out.splitlines()


def test_the_greene_allreduce_study_says_every_cell_is_skipped_one_line_per_reason(in_tmp, one_gpu, capsys):
    out = plan_lines(capsys, "--study", "allreduce", "--profile", "greene", "--executor", "local")
    assert any(line.startswith("local executor: this machine (1 GPU, ") and line.endswith(
        "runs 0 of 9 cells; `submit` will skip 9:") for line in out), out
    skipped = [line for line in out if " skipped (" in line]
    assert len(skipped) == 2, skipped
    assert skipped[0].startswith("3 skipped (allreduce-nccl-2g-r0, allreduce-nccl-2g-r1, allreduce-nccl-2g-r2): "
                                 + NEEDS.format(2))
    assert skipped[1].startswith("6 skipped (") and NEEDS.format(4) in skipped[1]  # 4 GPUs, and 2 nodes x 2


def test_a_hundred_cells_skipped_alike_take_one_line(in_tmp, one_gpu, capsys):
    out = plan_lines(capsys, "--study", "hw5", "--executor", "local")
    assert any(line.endswith("runs 21 of 87 cells; `submit` will skip 66:") for line in out), out
    skipped = [line for line in out if " skipped (" in line]
    assert [line.split(" (")[0] for line in skipped] == ["18 skipped", "48 skipped"]
    assert skipped[1].startswith("48 skipped (dp-4g-b32-e2, dp-4g-b128-e2, dp-4g-b512-e2, …): " + NEEDS.format(4))


def test_what_fits_is_said_too_and_plan_without_sbatch_is_local(in_tmp, one_gpu, capsys, monkeypatch):
    monkeypatch.setattr(slurm_client, "on_slurm", lambda: False)
    out = plan_lines(capsys, "--study", str(TINY_LOCAL))
    assert [line for line in out if " skipped (" in line] == [f"1 skipped (ddp-2g-b16-e2): {NEEDS.format(2)} "
                                                              "(submit --executor slurm on a login node) or on a "
                                                              "machine with 2 GPUs"]
    assert any(line.endswith("runs 1 of 2 cells; `submit` will skip 1:") for line in out), out


def test_a_plan_for_slurm_says_nothing_of_this_machine(in_tmp, one_gpu, capsys):
    out = plan_lines(capsys, "--study", str(TINY_LOCAL), "--executor", "slurm")
    assert not [line for line in out if "local executor" in line or " skipped (" in line]


def test_a_machine_that_runs_every_cell_says_so(in_tmp, capsys, monkeypatch):
    monkeypatch.setenv("PATH", "/nonexistent")  # no nvidia-smi: a GPU is a process
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(range(8)))
    out = plan_lines(capsys, "--study", str(TINY_LOCAL), "--executor", "local")
    assert "local executor: this machine (no GPU, 8 CPUs) runs 2 of 2 cells" in out
