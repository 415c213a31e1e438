"""Another study's job in a shared dir, on the real local SLURM (issue 45 item 5): a registry line
without a token, appended by someone else, points a cell at a job this study did not submit;
`cancel --all` cancelled it. A job is cancelled only where its name ties it to this study."""
from __future__ import annotations

import json
import subprocess

import pytest

from results_format import registry
from orchestrator.plan.plan import read_plan
from tests.helpers import cli, tiny_slurm_study, write_study

pytestmark = pytest.mark.slurm

STUDY = tiny_slurm_study("shared")


def state(job_id: str) -> str:
    return subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%T"], capture_output=True, text=True).stdout.strip()


def test_cancel_all_leaves_a_job_nothing_ties_to_this_study(slurm_cluster, in_tmp, capsys, monkeypatch):
    study = write_study(in_tmp, STUDY)
    assert cli(capsys, "plan", "--study", study)[0] == 0
    monkeypatch.setenv("SBATCH_HOLD", "1")  # everything stays pending
    assert cli(capsys, "submit", "--study", study, "--executor", "slurm")[0] == 0
    results = in_tmp / "runs" / "shared"
    ours = registry.load(results).submissions[0].job_id
    other = subprocess.run(["sbatch", "--parsable", "--hold", "-t", "1", "-J", "another-study", "--wrap", "sleep 1"],
                           capture_output=True, text=True, check=True).stdout.strip()
    try:
        forged = {"cell_id": read_plan(results).cell_ids[1], "executor": "slurm", "job_id": other, "array": "n1-g1-t1",
                  "submitted_at": registry.now_iso()}
        with open(results / "registry.jsonl", "a") as f:
            f.write(json.dumps(forged) + "\n")
        code, out, err = cli(capsys, "cancel", "--study", study, "--all")
        assert code == 0 and "cancelled 1 cell(s)" in out
        assert f"job {other}): nothing ties them to this study" in err
        assert state(other) == "PENDING" and state(ours) in ("CANCELLED", "")
    finally:
        subprocess.run(["scancel", other, ours.split("_")[0]], check=False)
