"""collect.load: one KindCell per planned cell or result file, of any kind, read from JSON only;
collect.train.frame: the training cells as the frame of the homework's tables."""
from __future__ import annotations

import json
import math

import pytest

from collect.load import SkippedFile, load
from jobs.core.layout import result_path
from jobs.core.result import ResultError, write_result
from jobs.train.cell import Cell
from tests.collect.dirs import MISSING, PENDING, mixed_results, write_ptq
from tests.factories import cell, ptq_cell, train_result, write_results
from tests.collect.training import training


def row(frame, c: Cell):
    hits = frame[frame.cell_id == c.cell_id]
    assert len(hits) == 1
    return hits.iloc[0]


def test_a_cell_per_planned_cell_with_its_status(mixed_dir):
    loaded = load(mixed_dir)
    expected = {r.cell_id: r.status for r in mixed_results()}
    expected.update({c.cell_id: "pending" for c in PENDING} | {c.cell_id: "not submitted" for c in MISSING})
    assert {c.cell_id: c.status for c in loaded.cells} == expected and len(loaded.cells) == len(expected)
    assert loaded.study == "mixed" and loaded.kinds() == ["train"]
    assert all((c.kept is None) == (c.status in ("pending", "not submitted")) for c in loaded.cells)


def test_the_frame_has_a_row_per_cell_and_the_epochs_of_each_result(mixed_dir):
    train = training(mixed_dir)
    assert set(train.frame.status) == {"ok", "oom", "failed", "timeout", "pending", "not submitted"}
    assert len(train.frame) == len(load(mixed_dir).cells)
    assert len(train.epochs[train.epochs.cell_id == cell("dp", 32, 2).cell_id]) == 2


def test_the_timed_epoch_figures_are_the_timed_epochs(mixed_dir):
    frame = training(mixed_dir).frame
    one = row(frame, cell("single", 32))
    assert (one.timed_epoch_s, one.timed_train_s, one.timed_data_wait_s) == (40.0, 32.0, 8.0)
    assert one.timed_loss == 1.0 and one.timed_accuracy == pytest.approx(0.2)  # epoch 2's, not epoch 1's
    assert (one.gpus, one.global_batch, one.gpu_model) == (1, 32, "NVIDIA H200")
    ddp = row(frame, cell("ddp", 32, 2))
    assert (ddp.gpus, ddp.global_batch, ddp.timed_comm_exposed_s) == (2, 64, 2.0)


def test_a_failed_row_keeps_the_last_line_of_its_error(mixed_dir):
    assert row(training(mixed_dir).frame, cell("ddp", 128, 2)).error == "RuntimeError: NCCL error"


def test_a_planned_cell_without_result_has_no_numbers(mixed_dir):
    missing = row(training(mixed_dir).frame, cell("ddp", 128, 4))
    assert math.isnan(missing.timed_epoch_s) and missing.gpus == 4


def test_a_submitted_cell_without_result_is_pending(mixed_dir, tmp_path):
    results = mixed_dir
    late = cell("ddp", 128, 4)
    with open(results / "registry.jsonl", "a") as f:  # a line cut short is skipped
        f.write('{"cell_id": "' + late.cell_id + '", "executor": "slurm", "job_id": "17_0", "array": "a", '
                '"submitted_at": "2026-01-01T00:00:00+00:00"}\n{"cell_id": "cut sh')
    assert row(training(results).frame, late).status == "pending"


def test_a_submitted_cell_whose_job_ended_without_result_has_failed(mixed_dir):
    """spent.json (what collect measured of the jobs) says the cell's latest job ended: the local
    executor's ENDED or SLURM's TIMEOUT; a charge of an earlier job, a live one or a state the
    scheduler did not give leaves the cell pending."""
    results = mixed_dir
    late = cell("ddp", 128, 4)
    with open(results / "registry.jsonl", "a") as f:
        for job in ("16", "17"):
            f.write(json.dumps({"cell_id": late.cell_id, "executor": "local", "job_id": job, "array": "a",
                                "submitted_at": "2026-01-01T00:00:00+00:00"}) + "\n")

    def charged(*charges):
        rows = [{"cell_id": late.cell_id, "job_id": job, "gpus": 4, "elapsed_s": 360.0, "source": "limit",
                 "state": state, "live": live, "gpu_hours": 0.4} for job, state, live in charges]
        (results / "spent.json").write_text(json.dumps({"charges": rows, "measured_at": ""}))
        return row(training(results).frame, late).status

    assert charged(("17", "ENDED", False)) == "failed"
    assert charged(("17", "TIMEOUT", False)) == "timeout"
    assert charged(("16", "ENDED", False)) == "pending"  # an earlier attempt's
    assert charged(("17", "RUNNING", True)) == "pending"
    assert charged(("17", "", False)) == "pending"  # the scheduler knew nothing of it


def test_a_cell_the_local_executor_skipped_is_skipped_until_submitted_again(mixed_dir, tmp_path):
    results = mixed_dir
    late = cell("ddp", 128, 4)
    skipped = {"cell_id": late.cell_id, "why": "needs 4 GPUs, this machine has 1", "at": "2026-01-01T00:00:00+00:00",
               "kind": "skipped"}
    with open(results / "registry.jsonl", "a") as f:
        f.write(json.dumps(skipped) + "\n")
    assert row(training(results).frame, late).status == "skipped"
    with open(results / "registry.jsonl", "a") as f:
        f.write(json.dumps({"cell_id": late.cell_id, "executor": "local", "job_id": "17", "array": "a",
                            "submitted_at": "2026-01-01T00:01:00+00:00"}) + "\n")
    assert row(training(results).frame, late).status == "pending"


def test_a_result_outside_the_plan_is_left_out_and_named_unless_asked_for(mixed_dir, tmp_path):
    """Issue 45 item 6: it was folded into Q1 ("10.00x faster from batch 8 to 64") and nothing said so."""
    results = mixed_dir
    extra = cell("single", 64)
    write_result(results, train_result(extra, epoch_s=3.0, train_s=2.0))
    with pytest.warns(SkippedFile, match=rf"1 result file\(s\) of cells the plan does not hold \({extra.cell_id}.json\)"):
        loaded = load(results)
    assert extra.cell_id not in {c.cell_id for c in loaded.cells}
    taken = load(results, unplanned=True)
    assert [c.status for c in taken.cells if c.cell_id == extra.cell_id] == ["ok"]


def test_a_junk_file_named_like_a_result_is_named_as_no_cell_of_the_plan(mixed_dir):
    """Issue 45 item 6: it asked to "rerun submit to redo that cell" for a cell that does not exist."""
    junk = mixed_dir / "0123456789ab.json"
    junk.write_text("junk")
    with pytest.raises(ResultError, match=f"{junk} cannot be read as a result .*no cell of the plan has that id"):
        load(mixed_dir)


def test_a_result_written_before_a_field_was_added_is_its_planned_cell(tmp_path):
    old = train_result(cell("single", 32), epoch_s=10.0, train_s=8.0)
    del old.cell["test_images"]  # as a result written before test evaluation
    results = write_results(tmp_path, [old])
    loaded = load(results)
    assert [(c.cell_id, c.status) for c in loaded.cells] == [(old.cell_id, "ok")]
    assert row(training(results).frame, cell("single", 32)).test_images == 10_000  # its default


def test_results_without_a_plan(tmp_path):
    write_result(tmp_path, train_result(cell("single", 32), epoch_s=10.0, train_s=8.0))
    train = training(tmp_path)
    assert list(train.frame.status) == ["ok"] and load(tmp_path).study is None
    assert list(train.epochs.epoch) == [1, 2] and list(train.epochs.epoch_s) == [15.0, 10.0]


def test_a_corrupt_result_file_is_never_skipped_silently(mixed_dir, tmp_path):
    results = mixed_dir
    broken = cell("single", 32).cell_id
    result_path(results, broken).write_text('{"cell_id": ')
    with pytest.raises(ResultError, match=broken):
        load(results)


def test_plan_only_gives_cells_not_submitted(tmp_path):
    results = write_results(tmp_path, planned=[cell("single", 32), cell("ddp", 32, 2)], study="t")
    assert [c.status for c in load(results).cells] == ["not submitted"] * 2 and load(results).study == "t"
    train = training(results)
    assert list(train.frame.status) == ["not submitted"] * 2 and train.epochs.empty


def test_cells_of_another_kind_are_kept_whole(tmp_path):
    loaded = load(write_ptq(tmp_path))
    assert loaded.kinds() == ["ptq"] and not loaded.of_kind("train")
    planned = [c for c in loaded.cells if c.kept is None]
    assert [(c.cell_id, c.status, c.cell) for c in planned] == [(ptq_cell(4).cell_id, "not submitted",
                                                                ptq_cell(4).to_dict())]
