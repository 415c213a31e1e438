"""The all-reduce study on the real local SLURM: 2 nodes x 1 CPU rank (gloo), ranks started by
srun from the job array's task, one rendezvous across the nodes; collect reads the sweep."""
from __future__ import annotations

import pytest

from jobs.allreduce.cell import AllreduceCell
from jobs.core.result import read_result
from orchestrator.cli import main
from tests.helpers import cell_states, cli_json, write_study

pytestmark = pytest.mark.slurm

STUDY = """
name = "allreduce-two-nodes"
kind = "allreduce"
[cluster]
gpus_per_node = 4
time_min = 5
cpus_per_task = 1
[defaults]
backend = "gloo"
nodes = 2
gpus_per_node = 0
cpu_ranks_per_node = 1
min_bytes = 8
max_bytes = 4096
factor = 4
warmup = 1
iters = 2
[[grid]]
"""


def test_two_nodes_of_one_cpu_rank_on_slurm(slurm_cluster, in_tmp, capsys):
    study = write_study(in_tmp, STUDY, "allreduce-two-nodes")
    assert main(["plan", "--study", str(study)]) == 0
    assert main(["submit", "--study", str(study), "--executor", "slurm", "--wait", "--interval", "1"]) == 0
    (cell,) = cell_states(capsys, study)
    assert (cell["label"], cell["state"], cell["node"]) == ("allreduce-gloo-2x1cpu-r0", "done", "n[1-2]")
    assert "_" in cell["job_id"], "the cell ran as a task of a job array"
    result = read_result(in_tmp / "runs" / "allreduce-two-nodes" / f"{cell['cell_id']}.json")
    found = result.body
    assert result.env["nodes"] == ["n1", "n2"] and result.env["world_size"] == 2 and result.env["launcher"] == "slurm"
    assert (found.world_size, found.backend, found.device) == (2, "gloo", "cpu")
    assert tuple(s.bytes for s in found.sizes) == AllreduceCell.from_dict(result.cell).sizes()

    tables = cli_json(capsys, "collect", "--study", study)
    assert {r["setup"] for r in tables["allreduce_sizes"]} == {"2 nodes x 1 CPU rank, gloo"}
    assert len(tables["allreduce_sizes"]) == 5 + 2 and all(r["busbw_gbps"] > 0 for r in tables["allreduce_sizes"])
