"""On the real local SLURM: jobs requeued mid-training resume and record every epoch once, and
status / submit --wait reach the end with accounting switched off."""
from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from jobs.core.layout import result_path
from jobs.core.result import read_result
from results_format import registry
from orchestrator.cli import main
from orchestrator.plan.plan import read_plan
from results_format.registry import Submission
from tests.helpers import TESTS, cell_states, cli_json, write_study

pytestmark = pytest.mark.slurm

START = TESTS / "cluster" / "start.sh"
EPOCHS = {"requeue": 60, "signal": 6}  # a requeue's SIGTERM is ignored for KillWait (5 s): 58 epochs outlast it on a quiet machine too
STUDY = """name = "{name}"
[cluster]
time_min = 10
cpus_per_task = 1
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = {images}
timed_epoch = 2
loader_workers = 0
batch_per_gpu = 32
engine = "single"
{grids}"""


def study_text(name: str, images: int, *epochs: int) -> str:
    """One cell per entry of `epochs`, each with that many epochs (and its own seed)."""
    grids = "".join(f"[[grid]]\nseed = {seed}\nepochs = {n}\n" for seed, n in enumerate(epochs))
    return STUDY.format(name=name, images=images, grids=grids)


def wait_for_line(path: Path, text: str, timeout_s: float = 120) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and text in path.read_text(errors="replace"):
            return
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never appeared in {path}")


def test_jobs_requeued_mid_training_resume_and_record_each_epoch_once(slurm_cluster, in_tmp, capsys):
    """One job is requeued from outside (`scontrol requeue`, as an admin or a node failure
    would); the other gets SIGUSR2, as before its time limit or a preemption, and submitit's
    checkpoint() requeues it itself."""
    study = write_study(in_tmp, study_text("long", 2000, EPOCHS["requeue"], EPOCHS["signal"]), "long")
    assert main(["plan", "--study", str(study)]) == 0
    assert main(["submit", "--study", str(study)]) == 0
    results = in_tmp / "runs" / "long"
    by_requeue, by_signal = registry.load(results).submissions
    log_out = {sub.job_id: Path(read_plan(results).resolve(sub.log_out)) for sub in (by_requeue, by_signal)}
    for sub, epochs in ((by_requeue, EPOCHS["requeue"]), (by_signal, EPOCHS["signal"])):
        wait_for_line(log_out[sub.job_id], f"epoch 2/{epochs}")
    subprocess.run(["scontrol", "requeue", by_requeue.job_id], check=True)
    subprocess.run(["scancel", "--signal=USR2", by_signal.job_id], check=True)
    wait_for_line(log_out[by_signal.job_id], "Requeued job", timeout_s=30)  # submitit's own requeue

    cells = cell_states(capsys, study)
    assert {c["state"] for c in cells} <= {"pending", "running"}, cells  # requeued, not failed
    assert main(["submit", "--study", str(study), "--wait", "--interval", "2"]) == 0
    assert "submitted 0 cell(s)" in capsys.readouterr().out

    for sub, epochs in ((by_requeue, EPOCHS["requeue"]), (by_signal, EPOCHS["signal"])):
        result = read_result(result_path(results, sub.cell_id))
        assert result.status == "ok"
        assert [e.epoch for e in result.body.epochs] == list(range(1, epochs + 1))  # each epoch exactly once
        log = log_out[sub.job_id].read_text()
        assert "resumed from" in log and log.count(f"epoch {epochs}/{epochs}") == 1
    assert "DUE TO JOB REQUEUE" in Path(read_plan(results).resolve(by_requeue.log_err)).read_text()


def restart_cluster(accounting: bool) -> None:
    env = dict(os.environ, ORCH_SLURM_ACCOUNTING="1" if accounting else "0")
    done = subprocess.run(["bash", str(START)], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]


def test_without_accounting_status_and_submit_wait_reach_the_end(slurm_cluster, in_tmp, capsys):
    study = write_study(in_tmp, study_text("noacct", 32, 2, 2, 2), "noacct")
    assert main(["plan", "--study", str(study)]) == 0
    results = in_tmp / "runs" / "noacct"
    restart_cluster(accounting=False)
    try:
        assert subprocess.run(["sacct", "-n"], capture_output=True).returncode != 0
        # a cell whose job left squeue long ago: only sacct could say how it ended
        gone = read_plan(results).cell_ids[2]
        registry.append_entries(results, [Submission(gone, "slurm", "999999_0", "n1-g1-t1", "2020-01-01T00:00:00+00:00")])
        capsys.readouterr()
        assert main(["submit", "--study", str(study), "--wait", "--interval", "1"]) == 1
        out = capsys.readouterr().out
        assert "submitted 2 cell(s)" in out and out.count("warning:") == 1 and "sacct unavailable" in out
        report = cli_json(capsys, "status", "--study", study)
        states = {c["cell_id"]: (c["state"], c["detail"]) for c in report["cells"]}
        assert "sacct unavailable" in report["warning"]
        assert [s for s, _ in states.values()].count("done") == 2
        assert states[gone][0] == "failed" and "no accounting here to say why" in states[gone][1]
        assert main(["submit", "--study", str(study), "--retry-failed", "--wait", "--interval", "1"]) == 0
        assert [c["state"] for c in cell_states(capsys, study)] == ["done"] * 3
    finally:
        restart_cluster(accounting=True)
    assert subprocess.run(["sacct", "-n"], capture_output=True).returncode == 0
