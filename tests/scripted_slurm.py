"""A SLURM client that answers squeue and sacct from text, and a planned study to ask about
(tests of status, recovery and the GPU-hour budget without a scheduler)."""
from __future__ import annotations

import datetime as dt
import subprocess
from pathlib import Path

from orchestrator.plan.plan import build_plan, install_plan
from orchestrator.slurm.slurm_client import SlurmClient
from orchestrator.plan.study import parse_study

NOW = dt.datetime(2026, 1, 1, 12, 0, tzinfo=dt.timezone.utc)


def iso(seconds_ago: float) -> str:
    return (NOW - dt.timedelta(seconds=seconds_ago)).isoformat(timespec="seconds")


class ScriptedSlurm(SlurmClient):
    """Answers squeue/sacct from text; counts calls like the real client."""

    def __init__(self, squeue: str = "", sacct: str | None = "") -> None:
        super().__init__(user="me")
        self.squeue, self.sacct, self.commands = squeue, sacct, []

    def _run(self, command):
        self.calls[command[0]] += 1
        self.commands.append(command)
        if command[0] == "sacct" and self.sacct is None:
            return subprocess.CompletedProcess(command, 1, "", "sacct: error: Slurm accounting storage is disabled\n")
        return subprocess.CompletedProcess(command, 0, self.squeue if command[0] == "squeue" else self.sacct, "")


def plan_of(tmp_path: Path, cells: int = 3):
    study = parse_study({"name": "s", "grid": [{"engine": "single", "batch_per_gpu": 8, "seed": list(range(cells))}]})
    plan = build_plan(study, tmp_path, tmp_path)
    install_plan(plan, "", {})
    return plan
