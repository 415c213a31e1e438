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


def test_after_a_killed_queue_the_failed_cells_are_not_counted_as_done(in_tmp, monkeypatch, capsys):
    assert main(["plan"]) == 0
    monkeypatch.setattr(submit_command, "submit", lambda plan, *a, **k: SubmitReport("local", (), 12, retryable=10))
    capsys.readouterr()
    assert main(["submit"]) == 0
    out = capsys.readouterr().out
    assert "; 2 done, queued or not due" in out and "10 cell(s) ended failed" in out


def test_ctrl_c_on_the_wait_says_the_queue_keeps_running(in_tmp, monkeypatch, capsys):
    assert main(["plan"]) == 0
    monkeypatch.setattr(submit_command, "submit", lambda plan, *a, **k: SubmitReport("local", (), 0))

    def interrupted(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(submit_command, "wait_for", interrupted)
    capsys.readouterr()
    assert main(["submit", "--wait"]) == 130
    assert "the queued cells keep running" in capsys.readouterr().err


def test_the_wait_ends_by_naming_the_next_command(in_tmp, monkeypatch, capsys):
    """Issue 43: `submit --wait` ended on a bare progress bar."""
    assert main(["plan", "--study", "hw5"]) == 0
    monkeypatch.setattr(submit_command, "submit", lambda plan, *a, **k: SubmitReport("local", (), 0))
    monkeypatch.setattr(submit_command, "wait_for", lambda plan, console, interval: 0)
    capsys.readouterr()
    assert main(["submit", "--wait"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "next: python -m orchestrator collect --study hw5"
    assert main(["submit", "--wait", "--results", "runs/hw5"]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "next: python -m orchestrator collect --results runs/hw5"
