"""`submit --settle` whose sbatch SLURM refused, on the real local SLURM (issue 45 item 4): plan.json
has grown by the repeats, and the next `submit --settle` queues them (it said "planned already ...
nothing queued", exit 0, while `status` showed them not submitted)."""
from __future__ import annotations

import os
import subprocess

import pytest

from orchestrator.plan.plan import read_plan
from results_format import registry
from tests.helpers import cli, tiny_slurm_study, write_study

pytestmark = pytest.mark.slurm

STUDY = tiny_slurm_study("settle")


def test_repeats_a_refused_sbatch_left_planned_are_queued_by_the_next_settle(slurm_cluster, in_tmp, capsys,
                                                                             monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")
    study = write_study(in_tmp, STUDY, "settle")
    assert cli(capsys, "plan", "--study", study)[0] == 0
    assert cli(capsys, "submit", "--study", study, "--executor", "slurm", "--wait", "--interval", "1")[0] == 0
    results = in_tmp / "runs" / "settle"
    before = read_plan(results)

    refusing = in_tmp / "bin"
    refusing.mkdir()
    (refusing / "sbatch").write_text("#!/bin/sh\necho 'sbatch: error: Invalid account or account/partition "
                                     "combination specified' >&2\nexit 1\n")
    (refusing / "sbatch").chmod(0o755)
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", f"{refusing}{os.pathsep}{path}")
    code, _, err = cli(capsys, "submit", "--study", study, "--settle", "--executor", "slurm")
    assert code == 2 and "Invalid account" in err
    grown = read_plan(results)
    assert len(grown.cell_ids) == len(before.cell_ids) + 4

    monkeypatch.setenv("PATH", path)
    code, out, err = cli(capsys, "submit", "--study", study, "--settle", "--executor", "slurm")
    try:
        assert code == 0, err
        assert "slurm: submitted 0 new repeat(s) and 4 planned earlier that no job had run (--settle)" in out
        queued = {s.cell_id for s in registry.load(results).submissions}
        assert set(grown.cell_ids) - set(before.cell_ids) <= queued
    finally:
        new = set(grown.cell_ids) - set(before.cell_ids)
        jobs = {s.job_id.split("_")[0] for s in registry.load(results).submissions if s.cell_id in new and s.job_id}
        subprocess.run(["scancel", *sorted(jobs)], check=False)  # the repeats need not run
