"""`plan` says what the study's jobs leave out where they would run on a CPU, and why."""
from __future__ import annotations

import pytest

from orchestrator.cli import main
from orchestrator.commands import plan as plan_command
from orchestrator.local.machine import Machine
from tests.helpers import TESTS


@pytest.mark.parametrize("gpus", [0, 4])
def test_plan_on_a_machine_without_gpus_names_what_a_cpu_leaves_out(in_tmp, capsys, monkeypatch, gpus):
    monkeypatch.setattr(plan_command, "this_machine", lambda: Machine(gpus=gpus, cpus=2))
    assert main(["plan"]) == 0  # the default study, quick
    out = " ".join(capsys.readouterr().out.split())
    said = "Run here (no GPU)" in out
    assert said == (gpus == 0)
    if said:
        assert "fits in GPU memory: a CPU has none to run out of" in out
        assert "the all-reduce is timed 3 times per size, not 20" in out


def test_a_kind_with_nothing_to_leave_out_says_nothing(in_tmp, capsys, monkeypatch):
    monkeypatch.setattr(plan_command, "this_machine", lambda: Machine(gpus=0, cpus=2))
    assert main(["plan", "--study", str(TESTS / "studies" / "ptq-tiny.toml")]) == 0
    assert "Run here (no GPU)" not in capsys.readouterr().out
