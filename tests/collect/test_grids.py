"""The tables laid out for people: statuses instead of dropped rows, captions with units,
timed epoch, GPU and repeats, formulas beside each table; Markdown, LaTeX and rich output."""
from __future__ import annotations

import csv
import math

import pandas as pd
import pytest
from rich.console import Console

from collect import render
from collect.fit import print_grids
from collect.report import as_written, collect
from tests.collect.dirs import write_mixed
from tests.factories import cell, train_result, write_results


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """The mixed dir collected once, in a dir of its own: its grids and the files written."""
    return collect(write_mixed(tmp_path_factory.mktemp("collected")))


@pytest.fixture(scope="module")
def grids(collected):
    return {g.key: g for g in collected.grids}


def rows_of(grid):
    return {row[0]: row for row in grid.rows}


def test_every_table_states_units_timed_epoch_gpu_and_repeats(grids):
    assert list(grids) == ["q1", "table1", "strong", "table2", "table3", "test", "q4", "overhead", "sweep"]  # sweep: Q4's remedies
    for grid in grids.values():
        assert grid.caption.startswith("Units: ")
        assert "GPU: NVIDIA H200." in grid.caption and "Repeats: " in grid.caption
        assert grid.formulas and not grid.empty
    for key in ("q1", "table1", "strong", "table2", "table3"):
        assert "Timed: epoch 2 of 2" in grids[key].caption
    assert "Timed: epoch 5" in grids["q4"].caption
    assert "Repeats: 1-3 per configuration (median (min-max) shown), seeded independently (run_seed)." \
        in grids["q1"].caption


def test_timing_tables_say_when_old_repeats_share_one_seed(tmp_path):
    """Results from before repeats were seeded (no run_seed) trained every repeat with the cell's seed."""
    runs = [train_result(cell("single", 128, repeat=i), epoch_s=e, train_s=t, seeded=False)
            for i, (e, t) in enumerate([(20.0, 16.0), (22.0, 17.0), (30.0, 25.0)])]
    runs += [train_result(cell("ddp", 128, 2, repeat=i), epoch_s=12.0, train_s=10.0) for i in range(2)]
    grids = {g.key: g for g in collect(write_results(tmp_path, runs)).grids}
    old = " trained from one seed (results written before repeats were seeded): their spread is not that of independent runs."
    assert "(median (min-max) shown); the repeats" + old in grids["q1"].caption  # its one configuration
    assert "the repeats of 1 of 2 configurations" + old in grids["table1"].caption
    assert "seeded independently (run_seed)." in grids["table2"].caption  # its rows: DDP's, seeded each
    assert grids["q1"].rows[0][-1] == "3 (one seed)"


def test_q1_grid_shows_oom_and_pending(grids):
    # TA4 20: the steps (ceil(50,000 / b)) and one step's train time (train time / steps) that Q1 quotes
    assert grids["q1"].rows == [
        ["32", "32.00", "40.00", "8.00", "20%", "1562", "1,563", "20.47", "2.50", "55", "1"],
        ["128", "17.00 (16.00-25.00) *", "22.00 (20.00-30.00) *", "5.00", "23%", "2941", "391", "43.48", "6.00", "85",
         "3"],  # * spread > 5%
        ["512", "OOM", "", "", "", "", "", "", "", "", "1"],
        ["8192", "pending", "", "", "", "", "", "", "", "", "1"],
    ]


def test_table1_grid_is_the_homework_layout_with_statuses(grids):
    grid = grids["table1"]
    assert grid.header == ["setup", "b=32 time (s)", "b=32 speedup", "b=32 efficiency", "b=32 data wait / epoch",
                           "b=128 time (s)", "b=128 speedup", "b=128 efficiency", "b=128 data wait / epoch"]
    rows = rows_of(grid)
    assert list(rows) == ["1 GPU", "2 GPUs, DataParallel", "2 GPUs, DDP", "4 GPUs, DataParallel", "4 GPUs, DDP"]
    assert rows["1 GPU"] == ["1 GPU", "40.00", "1.00", "1.00", "20%", "22.00 (20.00-30.00) *", "1.00", "1.00", "23%"]
    assert rows["2 GPUs, DataParallel"] == ["2 GPUs, DataParallel", "30.00", "1.33", "0.67", "20%", "pending", "", "", ""]
    assert rows["2 GPUs, DDP"] == ["2 GPUs, DDP", "25.00", "1.60", "0.80", "20%", "failed", "", "", ""]
    assert rows["4 GPUs, DataParallel"] == ["4 GPUs, DataParallel", "timeout", "", "", "", "not in study", "", "", ""]
    assert rows["4 GPUs, DDP"] == ["4 GPUs, DDP", "12.50", "3.20", "0.80", "20%", "not submitted", "", "", ""]
    assert any("T1 / TN" in f for f in grid.formulas)


def test_table2_and_table3_grids_say_what_was_not_measured(grids):
    t2 = {(r[0], r[1]): r for r in grids["table2"].rows}
    # the last column: the run's data wait (issue 44: Q3.1 quotes it, so Table 2 prints it)
    assert t2[("2 GPUs, DDP", "32")] == ["2 GPUs, DDP", "32", "32.00", "20.00", "16.00", "4.00", "20%", "15.00", "2.00",
                                         "10%", "5.00"]  # comm share 4.00 / 20.00; measured 2.00 / 20.00
    assert t2[("2 GPUs, DataParallel", "32")][-4:-1] == ["not measured"] * 3
    assert t2[("4 GPUs, DDP", "128")][3] == "not submitted"
    t3 = {(r[0], r[1]): r for r in grids["table3"].rows}
    assert t3[("2 GPUs, DDP", "32")] == ["2 GPUs, DDP", "32", "782", "11,173,962", "34.95", "4.00", "8.74", "2.00",
                                          "17.48", "40.00", "21.8%", "43.7%", "kept"]
    assert t3[("2 GPUs, DataParallel", "32")][-5:-1] == ["not measured", "not measured", "no busbw", "no busbw"]
    assert t3[("2 GPUs, DDP", "128")][5] == "failed"


def test_table2_says_what_its_measured_columns_timed_in_words(grids):
    """TA4 19: the footnote names what was timed (copies to the GPU, forward, backward, optimizer step, the all-reduce
    left exposed), not the result file's variable names."""
    said = " ".join(grids["table2"].formulas)
    assert not any(name in said for name in ("h2d_s", "compute_s", "comm_exposed_s")), said
    assert "host-to-device copies" in said and "forward, backward and optimizer step" in said and "no_sync" in said


def test_q4_grid_marks_the_baseline_and_the_oom(grids):
    rows = grids["q4"].rows
    # TA4 11: each epoch's training accuracy, as Q4.1 quotes it
    assert rows[0] == ["1 GPU", "128", "128", "none", "0.1000", "0.8000", "70.00%", "", "", "30, 45, 55, 62, 70",
                       "baseline (Lab 2)"]
    assert rows[1][:5] == ["4 GPUs, DDP", "8192", "32768", "none", "OOM"]
    assert rows[-1] == ["4 GPUs, DDP", "2048", "8192", "linear LR scaling + 2-epoch warmup", "6.4000", "1.4000",
                        "62.00%", "+0.6000", "-8.00", "20, 30, 40, 58, 62", ""]


def test_no_baseline_and_empty_tables_say_so(tmp_path):
    grid_list = collect(write_results(tmp_path, [train_result(cell("ddp", 64, 2), epoch_s=10.0, train_s=8.0)])).grids
    grids = {g.key: g for g in grid_list}
    assert grids["table1"].rows == [["2 GPUs, DDP", "10.00", "no T1 (not in study)", "", "20%"]]
    assert grids["table2"].rows[0][2] == "no T1 (not in study)"
    assert grids["q1"].empty and grids["strong"].empty and grids["q4"].empty
    assert "Timed: epoch 2 of 2" in grids["table1"].caption


def test_varying_fields_name_the_rows(tmp_path):
    results = [train_result(cell("single", 32, pipeline=p), epoch_s=t, train_s=t) for p, t in (("faithful", 9.0), ("fast", 3.0))]
    results += [train_result(cell("ddp", 32, 2, pipeline=p), epoch_s=t, train_s=t) for p, t in (("faithful", 6.0), ("fast", 2.0))]
    rows = rows_of({g.key: g for g in collect(write_results(tmp_path, results)).grids}["table1"])
    assert sorted(rows) == ["1 GPU [pipeline=faithful]", "1 GPU [pipeline=fast]", "2 GPUs, DDP [pipeline=faithful]",
                            "2 GPUs, DDP [pipeline=fast]"]
    assert rows["2 GPUs, DDP [pipeline=fast]"][2] == "1.50" and rows["2 GPUs, DDP [pipeline=faithful]"][2] == "1.50"


def test_broadcast_buffers_labels_only_ddp_rows(tmp_path):
    """TA5 18: "1 GPU [broadcast_buffers=True]" and "2 GPUs, DataParallel [broadcast_buffers=True]" named a
    setting of DDP alone on rows it does not apply to."""
    results = [train_result(cell(e, 32, g), epoch_s=t, train_s=t) for e, g, t in (("single", 1, 9.0), ("dp", 2, 7.0))]
    results += [train_result(cell("ddp", 32, 2, broadcast_buffers=b), epoch_s=5.0, train_s=5.0) for b in (True, False)]
    rows = rows_of({g.key: g for g in collect(write_results(tmp_path, results)).grids}["test"])
    assert sorted(rows) == ["1 GPU", "2 GPUs, DDP [broadcast_buffers=False]", "2 GPUs, DDP [broadcast_buffers=True]",
                            "2 GPUs, DataParallel"]


def test_setup_names(tmp_path):
    planned = [cell("ddp", 32, 4, nodes=2), cell("single", 32)]
    rows = {g.key: g for g in collect(write_results(tmp_path, planned=planned)).grids}["table1"].rows
    assert [r[0] for r in rows] == ["1 GPU", "2 nodes x 2 GPUs, DDP"]


def test_a_study_with_no_timing_runs_renders_an_empty_table_that_says_so(tmp_path):
    planned = [cell("single", 128, epochs=5, timed_epoch=5, lr_scaling="linear")]
    grid = {g.key: g for g in collect(write_results(tmp_path, planned=planned)).grids}["table1"]
    assert grid.rows == [] and grid.empty == "No timing runs in this study."
    assert "**No timing runs in this study.**" in render.to_markdown(grid)


def test_markdown_latex_and_rich(collected, grids):
    text = (collected.out_dir / "tables.md").read_text()
    assert text.count("| 1 GPU |") == 8 and "### Table 3: communication bandwidth utilization" in text
    assert "`speedup = T1 / TN" in text  # "1 GPU": Table 1's baseline row, Q4's, and the test table's 6 runs
    assert "| 2 GPUs, DDP | 25.00 | 1.60 | 0.80 | 20% | failed |  |  |  |" in text
    assert "| 4 GPUs, DataParallel | timeout |  |  |  | not in study |  |  |  |" in text
    assert "| 4 GPUs, DDP | 12.50 | 3.20 | 0.80 | 20% | not submitted |  |  |  |" in text
    tex = (collected.out_dir / "tables.tex").read_text()
    assert tex.count(r"\begin{table}") == 9 and "booktabs" in tex  # with the overhead and sweep tables
    console = Console(record=True, width=250)
    print_grids(console, [grids["table1"]])
    shown = console.export_text()
    assert "2 GPUs, DDP" in shown and "failed" in shown and "Units: seconds" in shown


def test_csv_files_hold_the_long_tables_row_for_row(collected):
    """Each CSV reads back as its table, every row and value (an empty text is a blank cell, as no
    number is), but the per-repeat values the verdicts read (as_written), and a spreadsheet shows the
    mixed dir's worked numbers and statuses."""
    for name in ("q1", "table1", "strong", "table2", "table3", "test", "q4", "sweep"):
        read = pd.read_csv(collected.out_dir / f"{name}.csv", keep_default_na=False, na_values=[""])
        table = as_written(collected.tables[name]).reset_index(drop=True).replace("", math.nan)
        pd.testing.assert_frame_equal(read, table, check_dtype=False)

    def rows(name: str) -> list[dict[str, str]]:
        with open(collected.out_dir / f"{name}.csv", newline="") as f:
            return list(csv.DictReader(f))

    assert [(r["batch_per_gpu"], r["status"], r["epoch_s"], r["train_s"], r["epoch_s_min"], r["epoch_s_max"], r["repeats"])
            for r in rows("q1")] == [("32", "ok", "40.0", "32.0", "40.0", "40.0", "1"),
                                     ("128", "ok", "22.0", "17.0", "20.0", "30.0", "3"),
                                     ("512", "oom", "", "", "", "", "0"), ("8192", "pending", "", "", "", "", "0")]
    table1 = {(r["engine"], r["gpus"], r["batch_per_gpu"]): r for r in rows("table1")}
    assert [table1["ddp", "2", "32"][k] for k in ("status", "epoch_s", "speedup", "efficiency")] == ["ok", "25.0", "1.6", "0.8"]
    assert [table1["ddp", "2", "128"][k] for k in ("status", "epoch_s", "error")] == ["failed", "", "RuntimeError: NCCL error"]
    assert (table1["ddp", "4", "128"]["status"], table1["dp", "2", "128"]["status"]) == ("not submitted", "pending")
    table3 = {(r["engine"], r["gpus"], r["batch_per_gpu"]): r for r in rows("table3")}
    assert (table3["ddp", "2", "32"]["busbw_gbps"], table3["ddp", "4", "32"]["busbw_gbps"]) == ("40.0", "50.0")
    assert [(r["batch_per_gpu"], r["lr_scaling"], r["warmup_epochs"], r["status"], r["loss"], r["accuracy"])
            for r in rows("q4")] == [("128", "none", "0", "ok", "0.8", "0.7"), ("8192", "none", "0", "oom", "", ""),
                                     ("2048", "none", "0", "ok", "1.6", "0.42"), ("2048", "linear", "0", "ok", "1.5", "0.52"),
                                     ("2048", "linear", "2", "ok", "1.4", "0.62")]


def test_repeats_within_5_percent_show_their_range_unmarked(tmp_path):
    runs = [train_result(cell("single", 64, repeat=i), epoch_s=e, train_s=e - 1) for i, e in enumerate([10.0, 10.2, 10.4])]
    q1 = collect(write_results(tmp_path, runs)).grids[0]
    assert q1.rows == [["64", "9.20 (9.00-9.40)", "10.20 (10.00-10.40)", "1.00", "10%", "5435", "782", "11.76", "-", "-",
                        "3"]]  # no GPU sampled

