"""A results dir copied or moved elsewhere still works where it is now: --results wins over the
path plan.json was written with."""
from __future__ import annotations

import shutil

import pytest

from jobs.core.result import write_result
from results_format import registry
from orchestrator.plan.plan import read_plan
from results_format.registry import Submission
from tests.factories import train_result
from tests.helpers import cli, cli_json, write_study

STUDY = """name = "moved"
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 32
epochs = 1
timed_epoch = 1
batch_per_gpu = 16
[[grid]]
engine = "single"
seed = [0, 1]
"""


def test_a_moved_results_dir_is_read_where_it_is(in_tmp, capsys):
    write_study(in_tmp, STUDY, "moved")
    old = in_tmp / "runs" / "moved"
    assert cli(capsys, "plan", "--study", "moved.toml")[0] == 0
    plan = read_plan(old)
    done, waiting = plan.cell_ids
    write_result(old, train_result(plan.cell(done)))
    logs = old / "logs"
    logs.mkdir()
    (logs / "999999_0_log.out").write_text("epoch 1/1: fine\n")
    (logs / "999999_0_log.err").write_text("")
    registry.append_entries(old, [Submission(done, "local", "999999", plan.arrays[0].name, registry.now_iso(),
                                     str(logs / "999999_0_log.out"), str(logs / "999999_0_log.err"), 999998)])
    new = in_tmp / "elsewhere" / "copy"
    new.parent.mkdir()
    shutil.move(old, new)

    states = {c["cell_id"]: c["state"] for c in cli_json(capsys, "status", "--study", "moved", "--results", new)["cells"]}
    assert states == {done: "done", waiting: "not submitted"}, states
    assert {r["status"] for r in cli_json(capsys, "collect", "--study", "moved", "--results", new)["q1"]} >= {"ok"}
    code, out, _ = cli(capsys, "logs", "--study", "moved", "--results", new, done)
    assert code == 0 and "epoch 1/1: fine" in out and str(new / "logs") in out
    assert read_plan(new).results_dir == str(new.absolute())
    assert not old.exists(), "nothing is written at the old path"


@pytest.mark.slurm
def test_submit_test_only_in_a_moved_dir_offers_only_the_cells_not_done(slurm_cluster, in_tmp, capsys):
    write_study(in_tmp, STUDY, "moved")
    old = in_tmp / "runs" / "moved"
    assert cli(capsys, "plan", "--study", "moved.toml")[0] == 0
    plan = read_plan(old)
    done = plan.cell_ids[0]
    write_result(old, train_result(plan.cell(done)))
    new = in_tmp / "copy"
    shutil.move(old, new)
    code, out, err = cli(capsys, "submit", "--study", "moved", "--results", new, "--test-only")
    assert code == 0 and "(1 cells)" in out and "nothing queued" in out, out + err
    assert not old.exists(), "submit recreated the old path"


@pytest.mark.slurm
def test_submit_refuses_a_results_dir_moved_to_a_path_slurm_cannot_read_back(slurm_cluster, in_tmp, capsys):
    write_study(in_tmp, STUDY, "moved")
    assert cli(capsys, "plan", "--study", "moved.toml")[0] == 0
    new = in_tmp / "back\\slash"
    shutil.move(in_tmp / "runs" / "moved", new)
    code, _, err = cli(capsys, "submit", "--study", "moved", "--results", new, "--executor", "slurm")
    assert code == 2 and "backslash" in err and len(err.strip().splitlines()) == 1, err
    assert not registry.load(new).intents
