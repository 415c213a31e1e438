"""Your own script on the real local SLURM: examples/tiny's loop as a job array, one process (a
task) and two processes on two nodes (srun's tasks, each given torchrun's environment from its
SLURM_* variables); its metrics in `collect --json`."""
from __future__ import annotations

import pytest

from jobs.core.result import read_result
from tests.helpers import STUDIES, cell_states, cli, cli_json, write_study

pytestmark = pytest.mark.slurm

STUDY = f"""
name = "command-slurm"
kind = "command"
[cluster]
gpus_per_node = 4
time_min = 5
cpus_per_task = 1
[defaults]
command = ["python", "train.py", "--batch", "{{batch_per_gpu}}", "--step-s", "0"]
workdir = "{STUDIES.parents[1] / "examples" / "tiny"}"
gpus_per_node = 0
cpu_ranks_per_node = 1
cpus_per_task = 1
batch_per_gpu = 8
[[grid]]
nodes = [1, 2]
"""


def test_the_tiny_script_on_one_and_two_nodes(slurm_cluster, in_tmp, capsys):
    study = write_study(in_tmp, STUDY, "command-slurm")
    assert cli(capsys, "plan", "--study", study)[0] == 0
    code, out, _ = cli(capsys, "submit", "--study", study, "--executor", "slurm", "--wait", "--interval", "1")
    assert code == 0, out
    cells = {c["label"].split("-")[1]: c for c in cell_states(capsys, study)}
    assert {k: (c["state"], c["node"]) for k, c in cells.items()} == {"1cpu": ("done", "n1"),
                                                                      "2x1cpu": ("done", "n[1-2]")}
    two = read_result(in_tmp / "runs" / "command-slurm" / f"{cells['2x1cpu']['cell_id']}.json")
    assert (two.env["nodes"], two.env["world_size"], two.env["launcher"]) == (["n1", "n2"], 2, "slurm")
    assert two.body.world_size == 2 and len(two.body.lines) == 2

    tables = cli_json(capsys, "collect", "--study", study)
    loss = {r["processes"]: r for r in tables["command_metrics"] if r["metric"] == "loss"}
    assert sorted(loss) == [1, 2] and all(r["value"] > 0 for r in loss.values())
    assert [(r["regime"], r["processes"]) for r in tables["command_scaling"]] == [("weak", 1), ("weak", 2)]
