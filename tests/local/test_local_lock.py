"""The local executor never runs two cells at once on one machine (they would time each other):
a second queue, started while a killed queue's job still runs, waits for it and says so."""
from __future__ import annotations

import os
import signal
import time

import pytest

from results_format import registry
from orchestrator.cli import main
from orchestrator.local.processes import QUEUE_MARKERS, pid_alive
from tests.helpers import cell_states, write_study

STUDY = """
name = "two-long"
[cluster]
time_min = 10
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 32
loader_workers = 1
batch_per_gpu = 8
epochs = 2000
timed_epoch = 2
engine = "single"
[[grid]]
seed = [1, 2]
"""


@pytest.fixture
def study(in_tmp):
    path = write_study(in_tmp, STUDY, "two")
    assert main(["plan", "--study", str(path)]) == 0
    yield str(path)
    main(["cancel", "--study", str(path), "--all"])


def states(study: str, capsys) -> list[str]:
    return [c["state"] for c in cell_states(capsys, study)]


def wait_for(study: str, capsys, wanted: list[str], seconds: float) -> list[str]:
    deadline = time.monotonic() + seconds
    while (now := states(study, capsys)) != wanted and time.monotonic() < deadline:
        time.sleep(0.5)
    return now


def test_a_second_queue_waits_for_the_cell_a_killed_queue_left_running(study, in_tmp, capsys):
    assert main(["submit", "--study", study, "--executor", "local"]) == 0
    assert wait_for(study, capsys, ["running", "queued"], 60) == ["running", "queued"]
    results = in_tmp / "runs" / "two-long"
    queue = next(iter(registry.load(results).latest.values())).queue_pid
    assert queue is not None
    os.kill(queue, signal.SIGTERM)  # the user kills the queue; its running job goes on
    assert wait_for(study, capsys, ["running", "failed"], 10) == ["running", "failed"]
    assert main(["submit", "--study", study, "--executor", "local", "--retry-failed"]) == 0
    for _ in range(8):  # the old cell still runs: the new queue must not start its cell beside it
        assert states(study, capsys) == ["running", "queued"]
        time.sleep(0.5)
    log = (results / "logs" / "local-queue.log").read_text()
    assert "waiting" in log and "running on this machine" in log, log
    first = registry.load(results).latest
    running = [cid for cid, sub in first.items() if sub.job_id][0]
    assert main(["cancel", "--study", study, running]) == 0
    assert wait_for(study, capsys, ["cancelled", "running"], 60) == ["cancelled", "running"]
    assert not pid_alive(queue, QUEUE_MARKERS)
