"""GPU-hours spent per configuration beside those its epochs used (collect/train/gpu_hours.py),
from spent.json's runs, with numbers worked by hand; and how `collect` measures spent.json
(orchestrator.budget.spent), reading the registry and the queue without writing either."""
from __future__ import annotations

import json
import subprocess

import pytest

from collect.report import collect
from orchestrator.budget import spent
from orchestrator.cli import main
from orchestrator.slurm.slurm_client import SlurmClient
from results_format import registry
from results_format.registry import Intent
from jobs.core.result import ResultError, write_result
from tests.factories import cell, train_result, write_results
from tests.scripted_slurm import iso, plan_of

ONE, TWO = cell("single", 128), cell("ddp", 128, 2)


def charge(c, job_id, elapsed_s, state="COMPLETED", gpus=None) -> dict:
    gpus = c.gpus if gpus is None else gpus
    return {"cell_id": c.cell_id, "job_id": job_id, "gpus": gpus, "elapsed_s": elapsed_s, "source": "sacct",
            "state": state, "live": False, "gpu_hours": gpus * elapsed_s / 3600}


SPENT = {"schema_version": 1, "study": "by-hand", "measured_at": "2026-01-01T12:00:00+00:00", "charges": [
    charge(ONE, "5_0", 20.0, "REQUEUED"), charge(ONE, "5_0", 40.0),  # one job, requeued once
    charge(TWO, "5_1", 30.0, "FAILED"), charge(TWO, "9_0", 50.0),  # a failed attempt, then its retry
]}


def test_spent_and_epoch_gpu_hours_per_configuration_by_hand(tmp_path):
    """Each result's epochs: 15 s and 10 s (the timed one), 25 s in all.
    1 GPU: spent 1 x (20 + 40) / 3600; in epochs 1 x 25 / 3600: 25 / 60 = 41.7%.
    2 GPUs: spent 2 x (30 + 50) / 3600 over 2 jobs; in epochs 2 x 25 / 3600: 25 / 80 = 31.2%."""
    results = write_results(tmp_path / "r", [train_result(ONE), train_result(TWO)])
    collected = collect(results, spent=SPENT)
    table = collected.tables["spent"].set_index("gpus")
    assert table.spent_gpu_h[1] == pytest.approx(60 / 3600) and table.spent_gpu_h[2] == pytest.approx(160 / 3600)
    assert table.epochs_s[1] == pytest.approx(25.0) and table.epochs_gpu_h[2] == pytest.approx(50 / 3600)
    assert table.in_epochs[1] == pytest.approx(25 / 60) and table.in_epochs[2] == pytest.approx(25 / 80)
    assert (table.jobs[1], table.jobs[2]) == (1, 2)
    grid = next(g for g in collected.grids if g.key == "spent")
    assert [row[0] for row in grid.rows] == ["1 GPU", "2 GPUs, DDP"]
    assert grid.rows[1][-1] == "31.2%" and "measured 2026-01-01T12:00:00+00:00" in grid.caption
    assert json.loads((results / "spent.json").read_text()) == SPENT  # written beside the tables


def test_spent_json_is_read_back_and_a_damaged_one_is_an_error_naming_it(tmp_path):
    results = write_results(tmp_path / "r", [train_result(ONE)])
    assert "spent" not in [g.key for g in collect(results).grids]  # nothing measured: no grid
    (results / "spent.json").write_text(json.dumps(SPENT))
    assert "spent" in [g.key for g in collect(results).grids]
    damaged = dict(SPENT, charges=[dict(charge(ONE, "5_0", 20.0), gpu_hours="lots")])
    (results / "spent.json").write_text(json.dumps(damaged))
    with pytest.raises(ResultError, match="spent.json is unreadable.*gpu_hours"):
        collect(results)


def test_a_study_never_submitted_spent_nothing_without_reading_its_cells(tmp_path, monkeypatch):
    """No submission and no intent in the registry (results copied in, or fabricated): nothing was
    spent, said without reading and checking the plan's cells or the result files, which a study of
    100,000 cells would make the slow part of collect."""
    results = write_results(tmp_path / "r", [train_result(ONE)], planned=[TWO])

    def unread(*args, **kwargs):
        raise AssertionError("read for nothing")

    monkeypatch.setattr(spent, "read_plan", unread)
    monkeypatch.setattr(spent, "measured_charges", unread)
    measured, why = spent.measure_spent(results)
    assert why == "" and measured["study"] == "by-hand" and measured["charges"] == []


def test_a_study_with_a_submission_is_measured(tmp_path):
    """One submission recorded: the plan and the jobs are read (squeue and sacct know nothing of job
    7_0 here, so it is charged from its result file's clock: its phases' sum, the task's start to its
    result, 1 GPU; or, in a result written before phases, 10:00 to 10:05)."""
    result = train_result(ONE)
    results = write_results(tmp_path / "r", [result], submitted=[ONE])
    measured, why = spent.measure_spent(results)
    assert why == "" and [(c["cell_id"], c["source"], c["elapsed_s"]) for c in measured["charges"]] == [
        (ONE.cell_id, "result", result.phases.total_s())]
    result.phases = None
    results = write_results(tmp_path / "old", [result], submitted=[ONE])
    assert [c["elapsed_s"] for c in spent.measure_spent(results)[0]["charges"]] == [300.0]


def test_collect_charges_an_interrupted_submits_jobs_and_writes_neither_the_registry_nor_the_queue(
        tmp_path, monkeypatch, capsys):
    """A submit killed after its sbatch left an intent, and squeue lists the array by its token:
    collect charges those jobs in spent.json (squeue's elapsed, 1 GPU each) and leaves recording
    them to `status` or `submit`; registry.jsonl is as it was, and SLURM is only asked (squeue). (A 4th
    cell, run before, has a result: collect before any result says only that nothing ran yet.)"""
    plan = plan_of(tmp_path, 4)
    write_result(tmp_path, train_result(plan.cells[3]))
    name = "s-n1-g1-t1-t9"
    registry.append_entries(tmp_path, [Intent("t9", "n1-g1-t1", name, plan.cell_ids[:3], iso(600), str(plan.log_dir))])
    before = (tmp_path / "registry.jsonl").read_bytes()
    asked = []

    def answer(self, command):
        asked.append(command[0])
        listed = "".join(f"77_{i}|RUNNING|1:00|n1|None|{name}\n" for i in range(3)) if command[0] == "squeue" else ""
        return subprocess.CompletedProcess(command, 0, listed, "")

    monkeypatch.setattr(SlurmClient, "_run", answer)
    assert main(["collect", "--results", str(tmp_path)]) == 0
    assert (tmp_path / "registry.jsonl").read_bytes() == before
    assert asked == ["squeue"]
    charges = json.loads((tmp_path / "spent.json").read_text())["charges"]
    assert [(c["cell_id"], c["job_id"], c["source"], c["elapsed_s"], c["live"]) for c in charges] == [
        (cell_id, f"77_{i}", "squeue", 60.0, True) for i, cell_id in enumerate(plan.cell_ids[:3])]


def test_a_study_run_on_cpus_speaks_of_no_gpu_hours(tmp_path):
    """The quick study run here: each "GPU" a process on a few cores. No GPU-hours table, no GPU-hours
    column or formula in the overhead table (the same runs on a GPU keep both)."""
    results = [train_result(ONE, gpu_model="cpu"), train_result(TWO, gpu_model="cpu")]
    grids = {g.key: g for g in collect(write_results(tmp_path / "cpu", results), spent=SPENT).grids}
    assert "spent" not in grids
    assert not any("GPU-h" in text for text in grids["overhead"].header + grids["overhead"].formulas
                   + [grids["overhead"].caption])
    on_gpu = {g.key: g for g in collect(write_results(tmp_path / "gpu", [train_result(ONE), train_result(TWO)]),
                                        spent=SPENT).grids}
    assert "spent" in on_gpu and "GPU-hours" in on_gpu["overhead"].header


def test_a_two_node_launch_on_one_host_keeps_the_tables_one_name(tmp_path):
    """Issue 44 (TA defect 6): the GPU-hours table said "2 nodes x 2 GPUs" where every other table and answer
    says what ran: 4 GPUs on one host (launched as 2 x 2)."""
    two = cell("ddp", 128, 4, nodes=2)
    results = write_results(tmp_path / "r", [train_result(ONE), train_result(two, env={"hostnames": ["vm", "vm"]})])
    spent = dict(SPENT, charges=[charge(ONE, "5_0", 40.0), charge(two, "5_1", 50.0)])
    grid = next(g for g in collect(results, spent=spent).grids if g.key == "spent")
    assert [row[0] for row in grid.rows] == ["1 GPU", "4 GPUs on one host (launched as 2 x 2), DDP"]
