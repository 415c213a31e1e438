"""What jobs cost, on the real local SLURM (issue 45 items 2 and 3): an array cancelled while
pending costs nothing once squeue has forgotten it (sacct keeps only its summary row); a requeued
job's earlier runs count while it waits to run again."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from results_format import registry
from tests.helpers import cli, cli_json, tiny_slurm_study, write_study

pytestmark = pytest.mark.slurm

STUDY = tiny_slurm_study("cancelled")


def forgetful_squeue(where: Path, array: str) -> str:
    """A PATH entry whose squeue is SLURM's without `array`'s tasks: as after MinJobAge (5 min)."""
    where.mkdir()
    script = where / "squeue"
    script.write_text(f"#!/bin/sh\n{shutil.which('squeue')} \"$@\" | grep -v '^{array}_'\nexit 0\n")
    script.chmod(0o755)
    return f"{where}{os.pathsep}{os.environ['PATH']}"


def sacct(array: str) -> str:
    return subprocess.run(["sacct", "-X", "-P", "-n", "-o", "JobID,State", "-j", array],
                          capture_output=True, text=True, check=True).stdout


def test_an_array_cancelled_while_pending_is_cancelled_and_costs_nothing(slurm_cluster, in_tmp, capsys, monkeypatch):
    study = write_study(in_tmp, STUDY)
    assert cli(capsys, "plan", "--study", study)[0] == 0
    monkeypatch.setenv("SBATCH_HOLD", "1")  # sbatch --hold: the tasks stay pending
    assert cli(capsys, "submit", "--study", study, "--executor", "slurm")[0] == 0
    array = registry.load(in_tmp / "runs" / "cancelled").submissions[0].job_id.split("_")[0]
    subprocess.run(["scancel", array], check=True)
    deadline = time.monotonic() + 30
    while not sacct(array).startswith(f"{array}_[0-1]|CANCELLED") and time.monotonic() < deadline:
        time.sleep(0.5)  # slurmdbd first has a row "ID|CANCELLED" of no name, then the summary row
    assert sacct(array) == f"{array}_[0-1]|CANCELLED by 0\n"  # only the summary row
    monkeypatch.setenv("PATH", forgetful_squeue(in_tmp / "bin", array))

    status = cli_json(capsys, "status", "--study", study)
    assert [c["state"] for c in status["cells"]] == ["cancelled", "cancelled"]
    assert status["gpu_hours"]["spent"] == 0.0


def squeue_state(job_id: str) -> str:
    return subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%T|%r"], capture_output=True, text=True).stdout.strip()


def test_a_requeued_job_is_charged_its_first_run_while_it_waits(slurm_cluster, in_tmp, capsys):
    study = write_study(in_tmp, STUDY.replace("batch_per_gpu = [8, 16]", "batch_per_gpu = 8"))
    assert cli(capsys, "plan", "--study", study)[0] == 0
    assert cli(capsys, "submit", "--study", study, "--executor", "slurm")[0] == 0
    job = registry.load(in_tmp / "runs" / "cancelled").submissions[0].job_id
    try:
        deadline = time.monotonic() + 60
        while not squeue_state(job).startswith("RUNNING") and time.monotonic() < deadline:
            time.sleep(0.5)
        time.sleep(2)  # the first run holds its GPU a while
        subprocess.run(["scontrol", "requeue", job], check=True)
        while squeue_state(job) != "PENDING|BeginTime" and time.monotonic() < deadline:
            time.sleep(0.2)  # COMPLETING first
        status = cli_json(capsys, "status", "--study", study)
        first = [c for c in status["gpu_hours"]["charges"] if c["state"] == "REQUEUED"]
        assert len(first) == 1 and first[0]["source"] == "sacct" and first[0]["elapsed_s"] >= 2
        assert status["gpu_hours"]["spent"] >= first[0]["gpu_hours"] > 0
    finally:
        subprocess.run(["scancel", job], check=False)
