"""submit --wait on the local executor looks at its cells every second, not at the scheduler's pace."""
from __future__ import annotations

import pytest

from orchestrator.cli import main
from orchestrator.commands import submit as submit_command
from orchestrator.submit import SubmitReport


@pytest.mark.parametrize("executor, flags, expected", [
    ("local", [], submit_command.LOCAL_POLL_S), ("local", ["--interval", "7"], 7.0), ("slurm", [], 10.0),
])
def test_the_wait_polls_a_local_queue_every_second(in_tmp, monkeypatch, executor, flags, expected):
    assert main(["plan"]) == 0
    monkeypatch.setattr(submit_command, "submit", lambda plan, *a, **k: SubmitReport(executor, (), 0))
    seen = []
    monkeypatch.setattr(submit_command, "wait_for", lambda plan, console, interval: seen.append(interval) or 0)
    assert main(["submit", "--wait", *flags]) == 0
    assert seen == [expected]
