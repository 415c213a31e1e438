"""`submit --settle` on the real local SLURM: a study of two 1-GPU batches, one run each, leaves
Q1's word inconclusive; the dry run prints the plan `collect` names, `--settle` queues exactly its
new repeats as SLURM array tasks (nothing measured again), and once they end Q1's verdict has a
spread on each side."""
from __future__ import annotations

import pytest

from collect.settle import answers_of, undecided
from results_format import registry
from orchestrator.plan.plan import read_plan
from tests.helpers import cli, tiny_slurm_study

pytestmark = pytest.mark.slurm

STUDY = tiny_slurm_study("settle")


def test_settle_queues_the_pilot_repeats_on_slurm(slurm_cluster, in_tmp, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "400")  # each settle line whole (test_screens_fit checks they wrap)
    study = in_tmp / "settle.toml"
    study.write_text(STUDY)
    assert cli(capsys, "plan", "--study", study)[0] == 0
    assert cli(capsys, "submit", "--study", study, "--executor", "slurm", "--wait", "--interval", "1")[0] == 0
    results = in_tmp / "runs" / "settle"
    before = read_plan(results)

    code, out, _ = cli(capsys, "collect", "--study", study, "--findings")  # the comparisons listed (TA4 24)
    # Q1's trend: its two runs (Q2's strong-scaling data point from them is gone: TA3 19)
    assert code == 0 and ("1 answer leaves a comparison undecided (their runs spread too wide to tell); `submit --settle` "
                          "adds 4 runs of 2 configurations") in out
    code, dry, _ = cli(capsys, "submit", "--study", study, "--settle", "--dry-run")
    assert code == 0 and [line for line in dry.splitlines() if "A.Q1, speedup" in line] == \
        [line for line in out.splitlines() if "A.Q1, speedup" in line]

    code, out, err = cli(capsys, "submit", "--study", study, "--settle", "--executor", "slurm")
    assert code == 0, err
    assert "slurm: submitted 4 new repeat(s) (--settle)" in out
    new = [c for c in read_plan(results).cells if c.cell_id not in set(before.cell_ids)]
    assert sorted(c.repeat for c in new) == [1, 1, 2, 2]
    queued = [s for s in registry.load(results).submissions if s.cell_id in {c.cell_id for c in new}]
    assert sorted(s.cell_id for s in queued) == sorted(c.cell_id for c in new) and all("_" in s.job_id for s in queued)

    code, out, _ = cli(capsys, "submit", "--study", study, "--executor", "slurm", "--wait", "--interval", "1")
    assert code == 0 and "submitted 0 cell(s)" in out  # nothing else was due: it waited for the repeats
    answers = answers_of(results)
    verdict = next(a for a in answers if a.id == "A.Q1").record.trend  # type: ignore[attr-defined]
    assert (verdict.n_a, verdict.n_b) == (3, 3) and not verdict.one_run
    assert all(u.round == "second stage" for u in undecided(answers))  # decided, or its second stage next
