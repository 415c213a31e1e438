"""An array cancelled while pending, on the real local SLURM (issue 45 item 2): once squeue has
forgotten it, sacct keeps only its summary row (`39_[0-1]|CANCELLED by 0`); its cells are
cancelled and cost nothing, never "unknown", nor failed and charged their time limit."""
from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from results_format import registry
from tests.helpers import cli, cli_json, write_study

pytestmark = pytest.mark.slurm

STUDY = """name = "cancelled"
[cluster]
time_min = 5
cpus_per_task = 1
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 32
loader_workers = 0
engine = "single"
[[grid]]
batch_per_gpu = [8, 16]
"""


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
    while "CANCELLED" not in sacct(array) and time.monotonic() < deadline:  # slurmdbd records it a moment later
        time.sleep(0.5)
    assert sacct(array).startswith(f"{array}|CANCELLED")  # only the array's row (held: no task ids)
    monkeypatch.setenv("PATH", forgetful_squeue(in_tmp / "bin", array))

    status = cli_json(capsys, "status", "--study", study)
    assert [c["state"] for c in status["cells"]] == ["cancelled", "cancelled"]
    assert status["gpu_hours"]["spent"] == 0.0
