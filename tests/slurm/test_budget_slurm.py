"""A GPU-hour budget on the real local SLURM (accounting on): submit refuses a plan above the
budget naming how many cells fit, --within-budget queues exactly those, a retry of a failed
cell is charged, and what status says was spent is sacct's elapsed x GPUs of every job."""
from __future__ import annotations

import json
import subprocess
import time

import pytest

from results_format import registry
from orchestrator.cli import main
from orchestrator.plan.plan import read_plan
from orchestrator.slurm.slurm_client import allocated_gpus
from results_format.states import ENDED_WORDS

pytestmark = pytest.mark.slurm

STUDY = """name = "capped"
[cluster]
time_min = 5
cpus_per_task = 1
budget_gpu_hours = 0.04     # by the profile: 1 GPU (2 x 32 / 5000 + 60) / 3600 = 0.0167, 2 GPUs 0.0334
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 32
loader_workers = 0
batch_per_gpu = 16
engine = "single"
[[grid]]
seed = 0
[[grid]]
seed = 1
dataset = "cifar10"         # no CIFAR-10 in data/: fails at once
[[grid]]
engine = "dp"
gpus_per_node = 2
"""


def cli(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def sacct_runs(job_ids: set[str], names: set[str], timeout_s: float = 60) -> list[list[str]]:
    """sacct's rows (JobID, State, ElapsedRaw, AllocTRES) of these jobs, every run, once all have ended."""
    arrays = ",".join(sorted({j.split("_")[0] for j in job_ids}))
    deadline = time.monotonic() + timeout_s
    while True:
        out = subprocess.run(["sacct", "-X", "-D", "-P", "-n", "-o", "JobID,State,ElapsedRaw,AllocTRES,JobName",
                              "-j", arrays], capture_output=True, text=True, check=True).stdout
        rows = [line.split("|") for line in out.splitlines()]
        rows = [r for r in rows if r[0] in job_ids and r[4] in names]
        ended = {r[0] for r in rows if r[1].split()[0] in ENDED_WORDS}
        if ended == job_ids or time.monotonic() > deadline:
            return rows
        time.sleep(1)


def test_a_budget_caps_submit_and_spent_is_sacct_elapsed_times_gpus(slurm_cluster, in_tmp, capsys):
    study = in_tmp / "capped.toml"
    study.write_text(STUDY)
    assert cli(capsys, "plan", "--study", study)[0] == 0
    results = in_tmp / "runs" / "capped"
    plan = read_plan(results)
    ids = plan.cell_ids

    code, _, err = cli(capsys, "submit", "--study", study)
    assert code == 2 and "need about 0.067 GPU-h" in err and "2 of them fit" in err
    assert registry.load(results).submissions == []

    code, out, _ = cli(capsys, "submit", "--study", study, "--within-budget", "--wait", "--interval", "1")
    assert "slurm: submitted 2 cell(s)" in out and "1 cell(s) due were left out" in out
    assert [s.cell_id for s in registry.load(results).submissions] == list(ids[:2])  # those that fit, in order

    code, out, _ = cli(capsys, "submit", "--study", study, "--budget-gpu-hours", 10, "--wait", "--interval", "1")
    assert "submitted 1 cell(s)" in out and "(0 from measured pace, 1 from the profile)" in out  # no 2-GPU cell yet
    code, out, _ = cli(capsys, "submit", "--study", study, "--retry-failed", "--budget-gpu-hours", 10, "--wait",
                       "--interval", "1")
    assert "submitted 1 cell(s) in 1 sbatch call(s) (--retry-failed)" in out
    assert "(1 from measured pace, 0 from the profile)" in out  # the failed cell's shape has a finished cell

    subs = registry.load(results).submissions
    jobs = {s.job_id for s in subs if s.job_id}
    assert len(jobs) == 4 and [s.cell_id for s in subs].count(ids[1]) == 2  # the failed cell ran twice
    names = {i.job_name for i in registry.load(results).intents.values()}
    rows = sacct_runs(jobs, names)
    cell_of = {s.job_id: s.cell_id for s in subs}
    expected = sum((allocated_gpus(tres) or plan.cell(cell_of[job]).gpus) * int(elapsed) / 3600
                   for job, _, elapsed, tres, _ in rows)

    code, out, _ = cli(capsys, "status", "--study", study, "--json")
    spent = json.loads(out)["gpu_hours"]
    assert spent["spent"] == pytest.approx(expected) and expected > 0
    assert {c["source"] for c in spent["charges"]} == {"sacct"}
    assert sorted((c["job_id"], c["elapsed_s"]) for c in spent["charges"]) == sorted(
        (job, float(elapsed)) for job, _, elapsed, _, _ in rows)
    retried = {c["job_id"] for c in spent["charges"] if c["cell_id"] == ids[1]}
    assert len(retried) == 2  # a retry of a failed cell is charged, beside the first attempt

    code, out, _ = cli(capsys, "status", "--study", study)
    assert f"{spent['spent']:.2g} GPU-h spent over 4 job(s) (4 from sacct)" in out
