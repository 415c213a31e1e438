"""collect.grids: the tables laid out for people, a status where there is no number."""
from __future__ import annotations

from collect import grids
from collect.load import load_frame
from collect.render import to_markdown
from collect.tables import q1_table, table1, table2, timing_protocol
from jobs.cell import Cell

from ._collect_data import write_plan_of


def t1_grid(results_dir):
    frame = load_frame(results_dir)
    return grids.table1_grid(table1(frame), timing_protocol(frame))


def test_table1_grid_by_hand(results_dir):
    grid = t1_grid(results_dir)
    assert grid.header == ["setup", "b=32 time (s)", "b=32 speedup", "b=32 efficiency",
                           "b=128 time (s)", "b=128 speedup", "b=128 efficiency"]
    assert grid.rows == [
        ["1 GPU", "10.00", "1.00", "1.00", "5.00", "1.00", "1.00"],
        ["2 GPUs, DataParallel", "missing", "", "", "not in study", "", ""],
        ["2 GPUs, DDP", "6.00", "1.67", "0.83", "OOM", "", ""],
        ["4 GPUs, DataParallel", "failed", "", "", "not in study", "", ""],
    ]
    assert "Timed: epoch 2 of 2" in grid.caption and "GPU: H200" in grid.caption
    assert grid.empty == ""


def test_markdown_of_table1_shows_oom_failed_and_missing(results_dir):
    text = to_markdown(t1_grid(results_dir))
    assert "| 2 GPUs, DDP | 6.00 | 1.67 | 0.83 | OOM |  |  |" in text
    assert "| 4 GPUs, DataParallel | failed |  |  | not in study |  |  |" in text
    assert "| 2 GPUs, DataParallel | missing |  |  | not in study |  |  |" in text
    assert "speedup = T1 / TN" in text


def test_q1_grid_by_hand(results_dir):
    frame = load_frame(results_dir)
    grid = grids.q1_grid(q1_table(frame), timing_protocol(frame))
    assert grid.rows == [["32", "8.00", "10.00", "2.00", "6250", "-", "1"],
                         ["128", "4.00", "5.00", "1.00", "12500", "-", "1"]]


def test_table2_grid_says_not_measured_and_status(results_dir):
    frame = load_frame(results_dir)
    rows = {r[0] + " b" + r[1]: r for r in grids.table2_grid(table2(frame), timing_protocol(frame)).rows}
    assert rows["2 GPUs, DDP b32"] == ["2 GPUs, DDP", "32", "8.00", "5.00", "4.00", "1.00", "4.50", "0.500"]
    assert rows["2 GPUs, DDP b128"][3] == "OOM"
    assert rows["4 GPUs, DataParallel b32"][3] == "failed"


def test_setup_names(tmp_path):
    write_plan_of(tmp_path, (Cell(engine="ddp", nodes=2, gpus_per_node=2, batch_per_gpu=32),
                             Cell(engine="single", batch_per_gpu=32)))
    assert [r[0] for r in t1_grid(tmp_path).rows] == ["1 GPU", "2 nodes x 2 GPUs, DDP"]


def test_a_field_that_varies_is_named_in_the_row(tmp_path):
    write_plan_of(tmp_path, (Cell(engine="single", batch_per_gpu=32, pipeline="fast"),
                             Cell(engine="single", batch_per_gpu=32)))
    assert sorted(r[0] for r in t1_grid(tmp_path).rows) == ["1 GPU [pipeline=faithful]", "1 GPU [pipeline=fast]"]


def test_a_study_with_no_timing_runs_renders_an_empty_table_that_says_so(tmp_path):
    write_plan_of(tmp_path, (Cell(engine="single", batch_per_gpu=128, epochs=5, timed_epoch=5, lr_scaling="linear"),))
    grid = t1_grid(tmp_path)
    assert grid.rows == [] and grid.empty == "No timing runs in this study."
    assert "**No timing runs in this study.**" in to_markdown(grid)
