"""Packed array tasks (submit --pack), the pure parts: tasks and their time limit, an interrupted
packed submit recovered, a packed task's GPU time split among its cells, each cell's part of the log."""
from __future__ import annotations

import pytest

from jobs.core.layout import cell_log_header, cell_part_of_log
from orchestrator.budget.spent import Charge, run_shares, split_packed
from orchestrator.errors import StudyError
from orchestrator.plan.cluster import ClusterSpec, packing, packing_text
from orchestrator.slurm.recovery import recover
from orchestrator.slurm import slurm_client
from orchestrator.slurm.slurm_client import JobState
from orchestrator.submit import submit
from results_format import registry
from results_format.registry import Intent, from_line, to_line
from tests.helpers import cli, write_study
from tests.scripted_slurm import NOW, ScriptedSlurm, iso, plan_of

A, B, C = "a" * 12, "b" * 12, "c" * 12
PACKED_STUDY = """name = "packed"
[cluster]
time_min = 10
pack = 3
max_time_min = 25
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 48
batch_per_gpu = 16
engine = "single"
[[grid]]
seed = [1, 2, 3, 4]
"""


def test_seven_cells_packed_three_a_task_take_three_tasks_of_three_times_the_limit():
    assert packing(7, 3, 20) == packing(7, 3, 20, max_time_min=0)
    packed = packing(7, 3, 20)
    assert (packed.cells_per_task, packed.tasks, packed.time_min, packed.capped) == (3, 3, 60, False)
    assert packing(2, 3, 20).time_min == 40, "two cells: no task runs three"
    assert packing(5, 1, 20) == packing(5, 1, 20, 30) and packing(5, 1, 20).tasks == 5


def test_a_packed_limit_is_capped_at_max_time_min_and_plan_says_so():
    packed = packing(6, 4, 30, max_time_min=100)
    assert (packed.time_min, packed.capped) == (100, True)
    assert "capped at max_time_min = 100" in packing_text(packed, 30)
    assert packing(6, 4, 30, max_time_min=20).time_min == 30, "never below one cell's own limit"
    assert "2 task(s) of up to 4 cells" in packing_text(packing(6, 4, 30), 30)


@pytest.mark.parametrize("key", ["pack", "max_time_min"])
def test_a_bad_pack_setting_names_its_key(key):
    with pytest.raises(StudyError, match=key):
        ClusterSpec(**{key: -1})


def test_an_interrupted_packed_submit_records_each_cell_with_its_task():
    intent = Intent("t1", "n1-g1-t1", "s-n1-g1-t1-t1", (A, B, C), iso(60), "/r/logs", pack=2)
    assert from_line(to_line(intent)) == intent
    found = recover([intent], set(), {"41_0": JobState("41_0", "RUNNING", name="s-n1-g1-t1-t1")}, NOW)
    assert [(s.cell_id, s.job_id) for s in found.submissions] == [(A, "41_0"), (B, "41_0"), (C, "41_1")]
    assert found.submissions[1].log_out == "/r/logs/41_0_0_log.out"


def test_a_task_run_is_split_by_the_cells_own_clocks_the_rest_shared_equally():
    assert run_shares(100.0, [30.0, None, None]) == [30.0, 35.0, 35.0]
    assert run_shares(100.0, [30.0, 20.0]) == [60.0, 40.0], "all known: in proportion, adding up to the run"
    assert run_shares(40.0, [30.0, 20.0, None]) == [24.0, 16.0, 0.0], "clocks apart: never more than the run"
    assert run_shares(90.0, [None, None, None]) == [30.0, 30.0, 30.0]


def test_split_packed_charges_a_packed_task_once_and_leaves_single_jobs_alone():
    charges = [Charge(A, "41_0", 1, 600.0, "sacct", "REQUEUED"), Charge(A, "41_0", 1, 300.0, "sacct", "COMPLETED"),
               Charge(B, "41_0", 1, 600.0, "sacct", "REQUEUED"), Charge(B, "41_0", 1, 300.0, "sacct", "COMPLETED"),
               Charge(C, "41_1", 1, 500.0, "sacct", "COMPLETED")]
    split = split_packed(charges, {(A, "41_0"): 200.0})
    assert [c.elapsed_s for c in split] == [200.0, 200.0, 400.0, 100.0, 500.0]
    assert sum(c.gpu_hours for c in split) == pytest.approx(sum(c.gpu_hours for c in charges) - 900 / 3600)


def test_logs_of_a_packed_task_are_cut_at_each_cells_header():
    log = "".join(f"{cell_log_header(cid, i, 3, 'lbl')}\n[{cid}] epoch 1/2\n" for i, cid in enumerate((A, B, C)))
    log += f"{cell_log_header(B, 1, 3, 'lbl')}\n[{B}] resumed\n"  # requeued: the task ran B again
    assert cell_part_of_log(log, A) == f"{cell_log_header(A, 0, 3, 'lbl')}\n[{A}] epoch 1/2\n"
    assert cell_part_of_log(log, B) == f"{cell_log_header(B, 1, 3, 'lbl')}\n[{B}] resumed\n", "its last run"
    assert cell_part_of_log("one cell's log\n", A) == "one cell's log\n", "a task of one cell: all of it"
    assert cell_part_of_log(log, "d" * 12) == ""


def test_plan_says_how_pack_groups_each_array_and_its_sbatch_text_asks_for_it(in_tmp, capsys):
    study = write_study(in_tmp, PACKED_STUDY)
    code, out, err = cli(capsys, "plan", "--study", study)
    assert code == 0, err
    assert "2 task(s) of up to 3 cells" in " ".join(out.split()) and "capped at max_time_min = 25" in " ".join(out.split())
    text = (in_tmp / "runs" / "packed" / "sbatch" / "n1-g1-t1.sh").read_text()
    assert "#SBATCH --time=25\n" in text and "#SBATCH --array=0-1\n" in text


def test_an_interrupted_packed_submit_is_found_and_submit_again_queues_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(slurm_client, "on_slurm", lambda: True)  # sbatch is never run: its jobs are found
    plan = plan_of(tmp_path)
    ids = [c.cell_id for c in plan.cells]
    name = "s-n1-g1-t1-t9"
    registry.append_entries(tmp_path, [Intent("t9", "n1-g1-t1", name, tuple(ids), iso(5), str(plan.log_dir), pack=2)])
    client = ScriptedSlurm(squeue="".join(f"77_{i}|PENDING|0:00||Priority|{name}\n" for i in range(2)))
    report = submit(plan, "slurm", client=client)
    assert report.submitted == () and report.sbatch_calls == 0
    assert [s.job_id for s in registry.load(tmp_path).submissions] == ["77_0", "77_0", "77_1"]
