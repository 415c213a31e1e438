"""A GPU-hour budget off-cluster: what sacct is asked (scripted), and the whole flow through the
local executor: plan shows the budget, submit refuses what does not fit and --within-budget
queues exactly what does, a retry of a failed cell is charged, status and collect say what
was spent."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs.core.result import Result, write_result
from results_format import registry
from orchestrator.budget import budget
from orchestrator.cli import main
from orchestrator.plan.plan import read_plan
from results_format.registry import Submission
from orchestrator.watch.status import Monitor
from tests.scripted_slurm import ScriptedSlurm, iso, plan_of

STUDY = """name = "capped"
[cluster]
time_min = 5
budget_gpu_hours = 0.04          # each cell: (2 x 48 / 5000 + 60) / 3600 = 0.0167 GPU-h by the profile
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 48
loader_workers = 0
batch_per_gpu = 16
engine = "single"
[[grid]]
seed = 0
[[grid]]
seed = 1
dataset = "cifar10"              # no CIFAR-10 in data/: fails at once
[[grid]]
seed = 2
"""


def cli(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def gpu_hours(capsys, study) -> dict:
    code, out, _ = cli(capsys, "status", "--study", study, "--json")
    assert code == 0
    return json.loads(out)["gpu_hours"]


# --- what the scheduler is asked (scripted) ---------------------------------------------------

def test_ended_jobs_are_charged_from_one_sacct_and_not_asked_about_again(tmp_path):
    plan = plan_of(tmp_path, 2)
    a, b = plan.cells
    for c in (a, b):
        write_result(tmp_path, Result(c.cell_id, c.to_dict(), "ok"))
    registry.append_entries(tmp_path, [Submission(a.cell_id, "slurm", "5_0", "n1-g1-t1", iso(600), token="t"),
                               Submission(b.cell_id, "slurm", "5_1", "n1-g1-t1", iso(600), token="t")])
    sacct = ("5_0|REQUEUED|40|n1|0:0|cpu=1,gres/gpu=1,node=1|s-n1-g1-t1-t\n"
             "5_0|COMPLETED|80|n1|0:0|cpu=1,gres/gpu=1,node=1|s-n1-g1-t1-t\n"
             "5_1|COMPLETED|60|n2|0:0|cpu=1,node=1|s-n1-g1-t1-t\n"
             "5_2|COMPLETED|99|n2|0:0|cpu=1,node=1|other-n1-g1-t1-x\n")  # another study's task of array 5
    client = ScriptedSlurm(squeue="", sacct=sacct)
    monitor = Monitor(plan, client)
    rows = monitor.refresh().rows
    sacct_call = client.commands[1]
    assert "-D" in sacct_call and sacct_call[-2:] == ["-j", "5"]
    ledger = budget.ledger_of(plan, monitor, rows)
    assert ledger.spent == pytest.approx((40 + 80 + 60) / 3600)
    monitor.refresh()
    assert client.calls == {"squeue": 2, "sacct": 1}  # both settled: sacct is not asked again


def test_running_jobs_are_charged_from_squeue_without_a_sacct(tmp_path):
    plan = plan_of(tmp_path, 1)
    registry.append_entries(tmp_path, [Submission(plan.cell_ids[0], "slurm", "5_0", "n1-g1-t1", iso(600), token="t")])
    client = ScriptedSlurm(squeue="5_0|RUNNING|2:00|n1|None|s-n1-g1-t1-t\n")
    monitor = Monitor(plan, client)
    rows = monitor.refresh().rows
    ledger = budget.ledger_of(plan, monitor, rows)
    assert client.calls == {"squeue": 1}
    assert ledger.spent == pytest.approx(120 / 3600) and ledger.running == ledger.spent


def test_a_requeued_job_waiting_again_is_charged_its_earlier_runs(tmp_path):
    """Issue 45 item 3: after `scontrol requeue` or a node failure the job waits (BeginTime) and sacct
    already lists its earlier runs; they were not counted until the rerun ended."""
    plan = plan_of(tmp_path, 1)
    registry.append_entries(tmp_path, [Submission(plan.cell_ids[0], "slurm", "5_0", "n1-g1-t1", iso(600), token="t")])
    client = ScriptedSlurm(squeue="5_0|PENDING|0:00||BeginTime|s-n1-g1-t1-t\n",
                           sacct="5_0|NODE_FAIL|65|n1|0:0|cpu=1,gres/gpu=1,node=1|s-n1-g1-t1-t\n"
                                 "5_0|PENDING|0|None assigned|0:0||s-n1-g1-t1-t\n")
    monitor = Monitor(plan, client)
    rows = monitor.refresh().rows
    assert rows[0].state == "pending"
    assert budget.ledger_of(plan, monitor, rows).spent == pytest.approx(65 / 3600)
    assert client.calls == {"squeue": 1, "sacct": 1}


# --- the whole flow through the local executor ------------------------------------------------

def test_a_budget_caps_submit_and_a_retry_is_charged(in_tmp, capsys):
    study = in_tmp / "capped.toml"
    study.write_text(STUDY)
    code, out, _ = cli(capsys, "plan", "--study", study, "--cells")
    assert code == 0 and "budget 0.04 GPU-h" in out and "2 of 3 cells fit" in out
    results = in_tmp / "runs" / "capped"
    ids = read_plan(results).cell_ids

    code, _, err = cli(capsys, "submit", "--study", study, "--executor", "local")
    assert code == 2 and "over budget" in err and "2 of them fit" in err and len(err.strip().splitlines()) == 1
    assert registry.load(results).submissions == []  # nothing queued

    code, out, _ = cli(capsys, "submit", "--study", study, "--executor", "local", "--within-budget", "--wait",
                       "--interval", "1")
    assert "submitted 2 cell(s)" in out and "1 cell(s) due were left out" in out
    assert code == 1 and "failed" in out and "not submitted" not in out  # the failure is named, the left-out not
    queued = list(dict.fromkeys(s.cell_id for s in registry.load(results).submissions))
    assert queued == list(ids[:2])  # exactly those that fit, in plan order
    first = gpu_hours(capsys, study)
    charged = {c["cell_id"]: c for c in first["charges"]}
    assert set(charged) == set(ids[:2]) and all(c["source"] == "result" for c in charged.values())  # their own clock
    assert all(c["elapsed_s"] > 0 and c["gpus"] == 1 for c in charged.values())
    assert first["spent"] == pytest.approx(sum(c["elapsed_s"] for c in charged.values()) / 3600)
    assert first["estimates"][ids[2]]["from"] == "measured"  # same shape as the finished cell 0

    code, _, err = cli(capsys, "submit", "--study", study, "--executor", "local", "--retry-failed",
                       "--budget-gpu-hours", first["spent"] / 2)
    assert code == 2 and "the 1 failed cell(s) to retry" in err and "0 of them fit" in err
    code, out, _ = cli(capsys, "submit", "--study", study, "--executor", "local", "--retry-failed", "--wait",
                       "--interval", "1")
    assert "submitted 1 cell(s)" in out
    after = gpu_hours(capsys, study)
    retried = [c for c in after["charges"] if c["cell_id"] == ids[1]]
    assert len(retried) == 2 and len({c["job_id"] for c in retried}) == 2  # both attempts charged
    # the first attempt's result was replaced by the retry's: its process's life charges it now (within 2 s)
    assert retried[0]["source"] == "process" and retried[1]["source"] == "result"
    assert after["spent"] == pytest.approx(first["spent"] + retried[1]["gpu_hours"], abs=2 / 3600)

    code, out, _ = cli(capsys, "status", "--study", study)
    unit = "CPU" if budget.gpus_here() == 0 else "GPU"  # local cells on a machine without a GPU: processes' hours
    assert f"{unit}-hours: " in out and "spent over 3 job(s) (2 from result files, 1 from local processes)" in " ".join(
        out.split())
    assert "not submitted: " in out and f"budget 0.04 {unit}-h" in out

    code, out, _ = cli(capsys, "collect", "--study", study, "--json")
    spent = json.loads(out)["spent"]
    assert sum(r["spent_gpu_h"] for r in spent) == pytest.approx(after["spent"], rel=0.05)  # measured again
    assert {(r["seed"], r["jobs"]) for r in spent} == {(0, 1), (1, 2)}
    ok_row = next(r for r in spent if r["seed"] == 0)
    assert 0 < ok_row["epochs_gpu_h"] < ok_row["spent_gpu_h"] and 0 < ok_row["in_epochs"] < 1
    assert json.loads(Path(results / "spent.json").read_text())["charges"]
