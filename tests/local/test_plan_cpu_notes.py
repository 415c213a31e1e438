"""`plan` says what the study's jobs leave out where they would run on a CPU, and why."""
from __future__ import annotations

import pytest

from orchestrator.cli import main
from orchestrator.commands import plan as plan_command
from orchestrator.local.machine import Machine
from orchestrator.slurm import slurm_client
from tests.helpers import TESTS


@pytest.mark.parametrize("gpus", [0, 4])
def test_plan_on_a_machine_without_gpus_names_what_a_cpu_leaves_out(in_tmp, capsys, monkeypatch, gpus):
    monkeypatch.setattr(plan_command, "this_machine", lambda: Machine(gpus=gpus, cpus=2))
    monkeypatch.setattr(slurm_client, "on_slurm", lambda: False)  # no sbatch: the cells run here
    assert main(["plan"]) == 0  # the default study, quick
    out = " ".join(capsys.readouterr().out.split())
    said = "Run here (no GPU)" in out
    assert said == (gpus == 0)
    if said:
        assert "fits in GPU memory: a CPU has none to run out of" in out
        assert "the all-reduce is timed 3 times per size, not 20" in out


def test_a_kind_with_nothing_to_leave_out_says_nothing(in_tmp, capsys, monkeypatch):
    monkeypatch.setattr(plan_command, "this_machine", lambda: Machine(gpus=0, cpus=2))
    monkeypatch.setattr(slurm_client, "on_slurm", lambda: False)
    assert main(["plan", "--study", str(TESTS / "studies" / "ptq-tiny.toml")]) == 0
    assert "Run here (no GPU)" not in capsys.readouterr().out


def fake_sbatch(tmp_path, monkeypatch) -> None:
    """A login node: `sbatch` on the PATH (never run by `plan`), no nvidia-smi (none in /usr/bin here)."""
    bin_dir = tmp_path / "login-bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text("#!/bin/sh\nexit 1\n")
    (bin_dir / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")


def test_a_login_node_plan_says_where_slurm_runs_the_cells_not_the_cpu_note(in_tmp, capsys, monkeypatch):
    fake_sbatch(in_tmp, monkeypatch)
    monkeypatch.setenv("USER", "student")
    assert main(["plan", "--study", "hw5", "--profile", "greene"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Run here (no GPU)" not in out and "local executor" not in out
    assert ("SLURM runs the cells on the cluster's default partition, nodes of 4 GPUs, inside singularity "
            "/scratch/work/public/singularity/cuda12.1.1-cudnn8.9.0-devel-ubuntu22.04.2.sif + "
            "/scratch/student/overlay-25GB-500K.ext3:ro") in out
    assert "no sbatch on this machine" not in out


def test_a_profile_off_the_cluster_says_where_to_submit(in_tmp, capsys, monkeypatch):
    monkeypatch.setattr(plan_command, "this_machine", lambda: Machine(gpus=0, cpus=2))
    monkeypatch.setattr(slurm_client, "on_slurm", lambda: False)
    assert main(["plan", "--profile", "greene"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Run here (no GPU)" not in out
    assert "no sbatch on this machine: run `submit` on the cluster's login node" in out


def test_the_local_executor_keeps_the_cpu_note_where_sbatch_is(in_tmp, capsys, monkeypatch):
    fake_sbatch(in_tmp, monkeypatch)
    monkeypatch.setattr(plan_command, "this_machine", lambda: Machine(gpus=0, cpus=2))
    assert main(["plan", "--executor", "local"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Run here (no GPU)" in out and "SLURM runs" not in out
