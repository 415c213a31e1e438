"""`cancel` stops a local job for good: its ranks too (submitit's tasks ignore SIGTERM, as on
SLURM, where it precedes a preemption)."""
from __future__ import annotations

import time

from orchestrator.cli import main
from tests.helpers import cell_states, write_study

STUDY = """
name = "long-local"
[cluster]
time_min = 10
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 48
loader_workers = 1
batch_per_gpu = 8
epochs = 2000
timed_epoch = 2
[[grid]]
engine = "ddp"
gpus_per_node = 2
"""


def wait_for(study, capsys, wanted: str, seconds: float) -> dict:
    deadline = time.monotonic() + seconds
    (cell,) = cell_states(capsys, study)
    while cell["state"] != wanted and time.monotonic() < deadline:
        time.sleep(0.5)
        (cell,) = cell_states(capsys, study)
    return cell


def test_cancel_stops_a_running_local_ddp_job_and_its_ranks(in_tmp, capsys):
    study = write_study(in_tmp, STUDY, "long")
    assert main(["plan", "--study", str(study)]) == 0
    assert main(["submit", "--study", str(study), "--executor", "local"]) == 0
    assert wait_for(study, capsys, "running", 60)["state"] == "running"
    time.sleep(3)  # the ranks are training
    assert main(["cancel", "--study", str(study), "--all"]) == 0
    cell = wait_for(study, capsys, "cancelled", 30)
    assert cell["state"] == "cancelled"
    logs = sorted((in_tmp / "runs/long-local/logs").glob("*_0_log.out"))
    size = logs[-1].stat().st_size
    time.sleep(5)
    assert logs[-1].stat().st_size == size, "rank 0 still writes: the job was not stopped"
    assert not (in_tmp / "runs/long-local" / f"{cell['cell_id']}.json").exists()
