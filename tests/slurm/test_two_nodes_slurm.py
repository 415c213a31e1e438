"""2 nodes x 2 GPUs the way SLURM starts them (two groups of ranks, node ranks 0 and 1, local
ranks 0-1 on each, one rendezvous) trains as 1 node x 4 GPUs does: the same per-epoch loss."""
from __future__ import annotations

import pytest

from jobs.core.result import read_result
from orchestrator.cli import main
from tests.helpers import cell_states, write_study

pytestmark = pytest.mark.slurm

STUDY = """
name = "two-nodes"
[cluster]
gpus_per_node = 4
time_min = 10
cpus_per_task = 1
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 64
epochs = 2
loader_workers = 0
batch_per_gpu = 8
engine = "ddp"
[[grid]]
nodes = 2
gpus_per_node = 2
[[grid]]
nodes = 1
gpus_per_node = 4
"""


def test_two_nodes_of_two_train_as_one_node_of_four(slurm_cluster, in_tmp, capsys):
    study = write_study(in_tmp, STUDY, "two-nodes")
    assert main(["plan", "--study", str(study)]) == 0
    assert main(["submit", "--study", str(study), "--executor", "slurm", "--wait", "--interval", "1"]) == 0
    cells = {c["label"]: c for c in cell_states(capsys, study)}
    assert [c["state"] for c in cells.values()] == ["done", "done"]
    results = {label: read_result(in_tmp / "runs" / "two-nodes" / f"{c['cell_id']}.json") for label, c in cells.items()}
    two_nodes, one_node = results["ddp-2x2-b8-e2"], results["ddp-4g-b8-e2"]
    assert two_nodes.env["nodes"] == ["n1", "n2"] and two_nodes.env["world_size"] == 4
    assert len(one_node.env["nodes"]) == 1 and one_node.env["world_size"] == 4
    # the same ranks see the same shards in the same order: only the all-reduce's path differs
    for a, b in zip(two_nodes.body.epochs, one_node.body.epochs, strict=True):
        assert a.loss == pytest.approx(b.loss, rel=1e-5) and a.accuracy == pytest.approx(b.accuracy)
