"""collect.load: one row per planned cell or result file, read from JSON only."""
from __future__ import annotations

import json
import math

import pytest

from collect.load import load, load_frame
from jobs.cell import Cell
from jobs.layout import result_path
from jobs.result import ResultError, write_result

from ._collect_data import DDP2_128, DDP2_32, DP2_32, DP4_32, SINGLE_128, SINGLE_32, ok_result, write_plan_of


def row(frame, cell: Cell):
    hits = frame[frame.cell_id == cell.cell_id]
    assert len(hits) == 1
    return hits.iloc[0]


def test_a_row_per_planned_cell_with_its_status(results_dir):
    frame = load_frame(results_dir)
    assert dict(zip(frame.cell_id, frame.status)) == {
        SINGLE_32.cell_id: "ok", SINGLE_128.cell_id: "ok", DDP2_32.cell_id: "ok",
        DDP2_128.cell_id: "oom", DP4_32.cell_id: "failed", DP2_32.cell_id: "missing"}


def test_the_timed_epoch_figures_are_the_timed_epochs(results_dir):
    one = row(load_frame(results_dir), SINGLE_32)
    assert (one.timed_epoch_s, one.timed_train_s, one.timed_data_wait_s) == (10.0, 8.0, 2.0)
    assert one.timed_loss == 1.0 and one.timed_accuracy == pytest.approx(0.2)  # epoch 2's, not epoch 1's
    assert (one.gpus, one.global_batch, one.gpu_model) == (1, 32, "H200")
    ddp = row(load_frame(results_dir), DDP2_32)
    assert (ddp.gpus, ddp.global_batch, ddp.timed_comm_exposed_s) == (2, 64, 0.5)


def test_a_failed_row_keeps_the_last_line_of_its_error(results_dir):
    assert row(load_frame(results_dir), DP4_32).error == "RuntimeError: NCCL error"


def test_a_planned_cell_without_result_has_no_numbers(results_dir):
    missing = row(load_frame(results_dir), DP2_32)
    assert math.isnan(missing.timed_epoch_s) and missing.gpus == 2


def test_a_submitted_cell_without_result_is_pending(results_dir):
    (results_dir / "registry.jsonl").write_text(
        json.dumps({"cell_id": DP2_32.cell_id, "executor": "slurm", "job_id": "17_0", "array": "a",
                    "submitted_at": "t"}) + "\n" + '{"cell_id": "cut sh')  # a line cut short is skipped
    assert row(load_frame(results_dir), DP2_32).status == "pending"


def test_a_result_outside_the_plan_still_gets_a_row(results_dir):
    extra = Cell(engine="single", batch_per_gpu=512)
    write_result(results_dir, ok_result(extra, 3.0, 2.0))
    assert row(load_frame(results_dir), extra).status == "ok"


def test_results_without_a_plan(tmp_path):
    write_result(tmp_path, ok_result(SINGLE_32, 10.0, 8.0))
    loaded = load(tmp_path)
    assert list(loaded.frame.status) == ["ok"] and loaded.study is None
    assert list(loaded.epochs.epoch) == [1, 2] and list(loaded.epochs.epoch_s) == [15.0, 10.0]


def test_a_corrupt_result_file_is_never_skipped_silently(results_dir):
    result_path(results_dir, SINGLE_32.cell_id).write_text('{"cell_id": ')
    with pytest.raises(ResultError, match=SINGLE_32.cell_id):
        load_frame(results_dir)


def test_plan_only_gives_missing_rows(tmp_path):
    write_plan_of(tmp_path, (SINGLE_32, DDP2_32))
    loaded = load(tmp_path)
    assert list(loaded.frame.status) == ["missing", "missing"] and loaded.study == "t"
    assert loaded.epochs.empty
