"""orchestrator.plan.plan: cells grouped into one array per resource shape; GPU-hour estimate; plan.json."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs.train.cell import Cell
from orchestrator.errors import PlanError
from jobs.core.layout import PLAN_FILE
from orchestrator.budget.estimate import gpu_hours, profile_pace
from results_format.plan_file import cell_dicts, cells_table
from orchestrator.plan.plan import Plan, build_plan, group_arrays, install_plan, read_plan, shape_of
from orchestrator.plan.cluster import ClusterSpec
from orchestrator.plan.study import load_study, parse_study


def test_quick_study_groups_into_three_arrays():
    s = load_study("quick")
    arrays = group_arrays(s.cells, s.cluster)
    assert [(a.name, len(a.cell_ids)) for a in arrays] == [("n1-g1-t1", 4), ("n1-g2-t1", 4), ("n1-g2-t2", 4)]
    by_id = {c.cell_id: c for c in s.cells}
    assert {by_id[i].engine for i in arrays[1].cell_ids} == {"dp"}
    assert {by_id[i].engine for i in arrays[2].cell_ids} == {"ddp"}


def test_hw5_study_groups_by_shape_and_every_cell_is_in_exactly_one_array():
    s = load_study("hw5")
    arrays = group_arrays(s.cells, s.cluster)
    sizes = {a.name: len(a.cell_ids) for a in arrays}
    # three repeats of: Q1 6 + Q4 baseline 1; dp 2/4; ddp 2; ddp 4: 3 + 6 large-batch + Q7's 1; 2 nodes x 2
    assert sizes == {"n1-g1-t1": 21, "n1-g2-t1": 9, "n1-g4-t1": 9, "n1-g2-t2": 9, "n1-g4-t4": 30, "n2-g2-t2": 9}
    ids = [i for a in arrays for i in a.cell_ids]
    assert sorted(ids) == sorted(c.cell_id for c in s.cells)


def test_shape_takes_the_request_from_the_cluster():
    cluster = ClusterSpec(gpus_per_node=4, partition="gpu", account="acct", time_min=45, mem_gb=64, gpu_request="gres")
    shape = shape_of(Cell(engine="ddp", nodes=2, gpus_per_node=2, batch_per_gpu=32, loader_workers=3), cluster)
    assert (shape.nodes, shape.gpus_per_node, shape.tasks_per_node) == (2, 2, 2)
    assert shape.cpus_per_task == 4  # loader workers + 1, as [cluster] cpus_per_task = 0
    assert (shape.partition, shape.account, shape.time_min, shape.mem_gb, shape.gpu_request) == ("gpu", "acct", 45, 64, "gres")
    assert shape_of(Cell(engine="single", batch_per_gpu=32), ClusterSpec(cpus_per_task=8)).cpus_per_task == 8


def test_cells_with_other_cpu_needs_go_into_other_arrays():
    cells = (Cell(engine="single", batch_per_gpu=32, loader_workers=2), Cell(engine="single", batch_per_gpu=32, loader_workers=4),
             Cell(engine="single", batch_per_gpu=64, loader_workers=2))
    arrays = group_arrays(cells, ClusterSpec())
    assert [a.cell_ids for a in arrays] == [(cells[0].cell_id, cells[2].cell_id), (cells[1].cell_id,)]
    assert arrays[0].shape.cpus_per_task == 3 and arrays[1].shape.cpus_per_task == 5


@pytest.mark.parametrize("cell, rate, hours", [
    # 1 x (2 x 50000 / (5000 x 1) + 60) / 3600 = 80/3600
    (Cell(engine="single", batch_per_gpu=32), 5000.0, 80 / 3600),
    # 4 x (2 x 50000 / (5000 x 4) + 60) / 3600 = 4 x 65 / 3600
    (Cell(engine="ddp", gpus_per_node=4, batch_per_gpu=32), 5000.0, 260 / 3600),
    # 4 x (5 x 50000 / (8000 x 4) + 60) / 3600 = 4 x 67.8125 / 3600
    (Cell(engine="ddp", nodes=2, gpus_per_node=2, batch_per_gpu=32, epochs=5, timed_epoch=5), 8000.0, 271.25 / 3600),
])
def test_estimate_gpu_hours_by_hand(cell, rate, hours):
    assert gpu_hours(cell, profile_pace(ClusterSpec(images_per_s_per_gpu=rate))) == pytest.approx(hours)


def test_build_plan_makes_paths_absolute(tmp_path):
    s = parse_study({"data_dir": "data", "grid": [{"engine": "single", "batch_per_gpu": 32}]})
    plan = build_plan(s, tmp_path / "runs", tmp_path)
    assert plan.data_dir == str(tmp_path / "data")
    assert plan.results_dir == str(tmp_path / "runs")
    assert plan.log_dir == tmp_path / "runs" / "logs"


def test_plan_round_trips_through_dict_and_file(tmp_path):
    s = load_study("hw5")
    plan = build_plan(s, tmp_path, tmp_path)
    assert Plan.from_dict(plan.to_dict()) == plan
    path = install_plan(plan, "", {})
    assert path == tmp_path / PLAN_FILE
    assert read_plan(tmp_path) == plan
    assert len(json.loads(path.read_text())["cells"]["own"]) == 3 * 29


def test_plan_lookups(tmp_path):
    plan = build_plan(load_study("quick"), tmp_path, tmp_path)
    ddp = next(c for c in plan.cells if c.engine == "ddp")
    assert plan.cell(ddp.cell_id) == ddp
    assert plan.array_of(ddp.cell_id).name == "n1-g2-t2"
    with pytest.raises(PlanError, match="cell 000000000000 is not in the plan of study quick"):
        plan.cell("000000000000")


def test_read_plan_on_a_missing_dir_says_to_run_plan(tmp_path):
    with pytest.raises(PlanError, match=r"no plan in .*missing; run `python -m orchestrator plan` first"):
        read_plan(tmp_path / "missing")


def test_read_plan_on_a_broken_file(tmp_path):
    (tmp_path / PLAN_FILE).write_text('{"study": "x"')
    with pytest.raises(PlanError, match="unreadable.*orchestrator plan"):
        read_plan(tmp_path)
    (tmp_path / PLAN_FILE).write_text('{"study": "x"}')
    with pytest.raises(PlanError, match="unreadable"):
        read_plan(Path(tmp_path))


def test_read_plan_on_deeply_nested_json(tmp_path):
    (tmp_path / PLAN_FILE).write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(PlanError, match="unreadable"):
        read_plan(tmp_path)


# --- plan.json: its cells a table, the file sealed (results_format.plan_file, results_format.sealed_json) --------------

def test_a_sealed_plan_is_read_without_checking_its_cells_again_and_equals_the_checked_one(tmp_path, monkeypatch):
    plan = build_plan(load_study("hw5"), tmp_path, tmp_path)
    install_plan(plan, "", {})
    monkeypatch.setattr(Cell, "__post_init__", lambda self: pytest.fail("a sealed plan's cell was checked again"))
    read = read_plan(tmp_path)
    monkeypatch.undo()
    assert read == plan and read.cell_ids == plan.cell_ids
    assert [Cell.from_dict(c.to_dict()).cell_id for c in read.cells] == list(plan.cell_ids)  # the ids are its fields'
    assert [c.label for c in read.cells] == [c.label for c in plan.cells]


def test_a_plan_edited_by_hand_is_checked_whole(tmp_path, monkeypatch):
    install_plan(build_plan(load_study("quick"), tmp_path, tmp_path), "", {})
    path = tmp_path / PLAN_FILE
    path.write_text(path.read_text().replace('"description": "', '"description": "edited: '))
    checked = []
    real = Cell.__post_init__
    monkeypatch.setattr(Cell, "__post_init__", lambda self: checked.append(1) or real(self))
    assert read_plan(tmp_path).description.startswith("edited: ") and len(checked) == 12


def test_a_plan_written_before_tables_still_reads(tmp_path):
    plan = build_plan(load_study("quick"), tmp_path, tmp_path)
    data = plan.to_dict()
    data["cells"] = [c.to_dict() for c in plan.cells]  # as plan.json held them: every cell's every field
    (tmp_path / PLAN_FILE).write_text(json.dumps(data, indent=1))
    assert read_plan(tmp_path) == plan


def test_the_table_shares_only_what_every_cell_holds_alike():
    cells = [{"a": 1, "b": 1, "c": "x", "d": True}, {"a": 1, "b": 1.0, "c": "x", "d": 1}, {"a": 1, "b": 1, "c": "x"}]
    table = cells_table(cells, ["i", "j", "k"])
    assert table["shared"] == {"a": 1, "c": "x"}  # 1.0 is not 1, nor 1 True, in a cell's JSON
    assert table["own"] == [{"b": 1, "d": True}, {"b": 1.0, "d": 1}, {"b": 1}]
    assert cell_dicts(table) == cells and table["ids"] == ["i", "j", "k"]
