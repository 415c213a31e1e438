"""collect.load: one row per planned cell or result file, read from JSON only."""
from __future__ import annotations

import math

import pytest

from collect.load import load
from jobs.train.cell import Cell
from jobs.core.layout import result_path
from jobs.core.result import ResultError, write_result
from tests.collect.dirs import MISSING, PENDING, mixed_results
from tests.factories import cell, train_result, write_results


def row(frame, c: Cell):
    hits = frame[frame.cell_id == c.cell_id]
    assert len(hits) == 1
    return hits.iloc[0]


def test_a_row_per_planned_cell_with_its_status(mixed_dir):
    loaded = load(mixed_dir)
    frame = loaded.frame
    expected = {r.cell_id: r.status for r in mixed_results()}
    expected.update({c.cell_id: "pending" for c in PENDING} | {c.cell_id: "missing" for c in MISSING})
    assert len(frame) == len(expected) and dict(zip(frame.cell_id, frame.status)) == expected
    assert set(frame.status) == {"ok", "oom", "failed", "timeout", "pending", "missing"}
    assert loaded.study == "mixed"
    assert len(loaded.epochs[loaded.epochs.cell_id == cell("dp", 32, 2).cell_id]) == 2


def test_the_timed_epoch_figures_are_the_timed_epochs(mixed_dir):
    frame = load(mixed_dir).frame
    one = row(frame, cell("single", 32))
    assert (one.timed_epoch_s, one.timed_train_s, one.timed_data_wait_s) == (40.0, 32.0, 8.0)
    assert one.timed_loss == 1.0 and one.timed_accuracy == pytest.approx(0.2)  # epoch 2's, not epoch 1's
    assert (one.gpus, one.global_batch, one.gpu_model) == (1, 32, "NVIDIA H200")
    ddp = row(frame, cell("ddp", 32, 2))
    assert (ddp.gpus, ddp.global_batch, ddp.timed_comm_exposed_s) == (2, 64, 2.0)


def test_a_failed_row_keeps_the_last_line_of_its_error(mixed_dir):
    assert row(load(mixed_dir).frame, cell("ddp", 128, 2)).error == "RuntimeError: NCCL error"


def test_a_planned_cell_without_result_has_no_numbers(mixed_dir):
    missing = row(load(mixed_dir).frame, cell("ddp", 128, 4))
    assert math.isnan(missing.timed_epoch_s) and missing.gpus == 4


def test_a_submitted_cell_without_result_is_pending(mixed_dir):
    late = cell("ddp", 128, 4)
    with open(mixed_dir / "registry.jsonl", "a") as f:  # a line cut short is skipped
        f.write('{"cell_id": "' + late.cell_id + '", "executor": "slurm", "job_id": "17_0", "array": "a", '
                '"submitted_at": "t"}\n{"cell_id": "cut sh')
    assert row(load(mixed_dir).frame, late).status == "pending"


def test_a_result_outside_the_plan_still_gets_a_row(mixed_dir):
    extra = cell("single", 64)
    write_result(mixed_dir, train_result(extra, epoch_s=3.0, train_s=2.0))
    assert row(load(mixed_dir).frame, extra).status == "ok"


def test_results_without_a_plan(tmp_path):
    write_result(tmp_path, train_result(cell("single", 32), epoch_s=10.0, train_s=8.0))
    loaded = load(tmp_path)
    assert list(loaded.frame.status) == ["ok"] and loaded.study is None
    assert list(loaded.epochs.epoch) == [1, 2] and list(loaded.epochs.epoch_s) == [15.0, 10.0]


def test_a_corrupt_result_file_is_never_skipped_silently(mixed_dir):
    broken = cell("single", 32).cell_id
    result_path(mixed_dir, broken).write_text('{"cell_id": ')
    with pytest.raises(ResultError, match=broken):
        load(mixed_dir).frame


def test_plan_only_gives_missing_rows(tmp_path):
    loaded = load(write_results(tmp_path, planned=[cell("single", 32), cell("ddp", 32, 2)], study="t"))
    assert list(loaded.frame.status) == ["missing", "missing"] and loaded.study == "t"
    assert loaded.epochs.empty
