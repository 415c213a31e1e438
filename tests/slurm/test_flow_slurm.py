"""The whole flow against the real local SLURM: a 1-GPU cell, a 2-GPU DataParallel cell,
a 2-task DDP cell and a 2-node DDP cell (gloo on CPU)."""
from __future__ import annotations

import json

import pytest

from orchestrator.cli import main
from tests.helpers import TINY_STUDY, cell_states, cli_json

pytestmark = pytest.mark.slurm


def test_plan_submit_status_collect_on_slurm(slurm_cluster, in_tmp, capsys):
    study = str(TINY_STUDY)
    assert main(["plan", "--study", study]) == 0
    capsys.readouterr()
    assert main(["submit", "--study", study, "--executor", "slurm", "--wait", "--interval", "1"]) == 0
    assert "slurm: submitted 4 cell(s)" in capsys.readouterr().out

    cells = cell_states(capsys, study)
    assert [c["state"] for c in cells] == ["done"] * 4
    assert all("_" in c["job_id"] for c in cells), "every cell ran as a task of a job array"
    two_node = next(c for c in cells if c["label"].startswith("ddp-2x1"))
    assert two_node["node"] == "n[1-2]"

    table1 = cli_json(capsys, "collect", "--study", study)["table1"]
    assert {(r["engine"], r["nodes"], r["gpus"]) for r in table1} == {
        ("single", 1, 1), ("dp", 1, 2), ("ddp", 1, 2), ("ddp", 2, 2)}
    assert all(r["status"] == "ok" and r["epoch_s"] > 0 for r in table1)

    results = in_tmp / "runs" / "tiny"
    two_node_result = json.loads((results / f"{two_node['cell_id']}.json").read_text())
    assert two_node_result["env"]["nodes"] == ["n1", "n2"] and two_node_result["env"]["world_size"] == 2
    phases = two_node_result["phases"]  # the sbatch script says when the task started (SLURM 22.05 does not)
    assert phases["launch_s"] is not None and phases["start_s"] > 0 and phases["epochs_s"] > 0

    lines = (results / "registry.jsonl").read_text().count("\n")
    assert main(["submit", "--study", study]) == 0
    assert "submitted 0 cell(s)" in capsys.readouterr().out
    assert (results / "registry.jsonl").read_text().count("\n") == lines
