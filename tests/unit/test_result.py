"""jobs.core.result: the result JSON, written atomically, never trading a good answer for a failure."""
from __future__ import annotations

import dataclasses
import json
import math

import pytest

from jobs.train.cell import Cell
from jobs.train.result import DDPEvidence
from jobs.core.result import (ERROR_CHARS, ERROR_LINES, Result, ResultError, read_good_result, read_result, result_path,
                              write_result)
from tests.factories import cell, train_result

CELL = cell("ddp", 128, 2)


def result(status: str, error: str | None = None) -> Result:
    """CELL's result: a 10 s timed epoch (9 s training), 0.25 s of exposed communication, busbw 4.47
    GB/s; an ok one with its peak memory and GPU use too, so every field is filled."""
    out = train_result(CELL, status, epoch_s=10.0, train_s=9.0, comm_exposed_s=0.25, busbw_gbps=4.47, error=error)
    if out.body is not None:
        out.peak_mem_gib, out.body.gpu_util = 3.5, {"mean_pct": 90}
    return out


def stored_status(tmp_path) -> str:
    return json.loads(result_path(tmp_path, CELL.cell_id).read_text())["status"]


def test_round_trip_through_json_keeps_every_field(tmp_path):
    original = result("ok")
    path = write_result(tmp_path, original)
    assert path == tmp_path / f"{CELL.cell_id}.json"
    again = read_result(path)
    assert again == original
    assert again.body.timed.train_s == 9.0 and again.body.epochs[1].comm_exposed_s == 0.25
    assert Result.from_dict(original.to_dict()) == original


def test_written_file_has_schema_version_and_cell_fields(tmp_path):
    data = json.loads(write_result(tmp_path, result("ok")).read_text())
    assert data["schema_version"] == 1
    assert data["cell_id"] == CELL.cell_id and data["cell"]["batch_per_gpu"] == 128


def test_no_temporary_file_is_left_behind(tmp_path):
    write_result(tmp_path, result("failed"))
    write_result(tmp_path, result("ok"))
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{CELL.cell_id}.json"]


def test_a_write_that_fails_midway_leaves_the_old_file_whole(tmp_path):
    write_result(tmp_path, result("failed", "first try"))
    broken = result("failed", "second try")
    broken.env = {"not json": object()}
    with pytest.raises(TypeError):
        write_result(tmp_path, broken)
    assert read_result(result_path(tmp_path, CELL.cell_id)).error == "first try"
    assert [p.name for p in tmp_path.iterdir()] == [f"{CELL.cell_id}.json"]


@pytest.mark.parametrize("good", ["ok", "oom"])
@pytest.mark.parametrize("later", ["failed", "timeout", "ok"])
def test_a_good_result_is_never_replaced(tmp_path, good, later):
    write_result(tmp_path, result(good))
    write_result(tmp_path, result(later))
    assert stored_status(tmp_path) == good


@pytest.mark.parametrize("later", ["ok", "oom", "failed"])
def test_a_failed_result_can_be_replaced(tmp_path, later):
    write_result(tmp_path, result("failed", "boom"))
    write_result(tmp_path, result(later, "again"))
    assert stored_status(tmp_path) == later
    assert read_result(result_path(tmp_path, CELL.cell_id)).error == ("again" if later != "ok" else None)


def test_a_corrupt_file_is_replaced_by_the_next_write(tmp_path):
    result_path(tmp_path, CELL.cell_id).write_text('{"status": "ok", "cell_id"')
    write_result(tmp_path, result("failed"))
    assert stored_status(tmp_path) == "failed"


def test_truncated_json_raises_result_error_naming_the_file(tmp_path):
    path = write_result(tmp_path, result("ok"))
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    with pytest.raises(ResultError, match=str(path)):
        read_result(path)
    assert read_good_result(tmp_path, CELL.cell_id) is None


def test_missing_file_raises_result_error(tmp_path):
    with pytest.raises(ResultError, match="nope.json"):
        read_result(tmp_path / "nope.json")


@pytest.mark.parametrize("damage", [
    {"status": "exploded"},
    {"cell": {**CELL.to_dict(), "gpus": 2}},  # unknown cell field
    {"cell": {**CELL.to_dict(), "batch_per_gpu": 0}},  # invalid cell
    {"unexpected": 1},
])
def test_a_well_formed_file_with_bad_content_raises_result_error(tmp_path, damage):
    path = result_path(tmp_path, CELL.cell_id)
    path.write_text(json.dumps({**result("failed").to_dict(), **damage}))
    with pytest.raises(ResultError, match=f"{CELL.cell_id}.json"):
        read_result(path)


@pytest.mark.parametrize("damage, named", [
    ({"env": None}, "env"), ({"env": []}, "env"), ({"epochs": None}, "epochs"), ({"epochs": [1]}, "epochs"),
    ({"cell": None}, "cell"), ({"cell_id": 7}, "cell_id"), ({"error": 3}, "error"), ({"timed": 5}, "timed"),
    ({"comm": "x"}, "comm"), ({"gpu_util": 1}, "gpu_util"), ({"peak_mem_gib": "3"}, "peak_mem_gib"),
    ({"schema_version": "1"}, "schema_version"),
])
def test_a_field_of_the_wrong_type_is_a_result_error_naming_it(tmp_path, damage, named):
    path = result_path(tmp_path, CELL.cell_id)
    path.write_text(json.dumps({**result("ok").to_dict(), **damage}))
    with pytest.raises(ResultError, match=f"{CELL.cell_id}.json.*{named}"):
        read_result(path)


def test_a_result_copied_over_another_cells_file_is_an_error(tmp_path):
    other = Cell(engine="single", batch_per_gpu=32)
    path = write_result(tmp_path, result("ok"))
    copy = result_path(tmp_path, other.cell_id)
    copy.write_text(path.read_text())
    with pytest.raises(ResultError, match=rf"{other.cell_id}.json .*holds the result of cell {CELL.cell_id}"):
        read_result(copy)
    assert read_good_result(tmp_path, other.cell_id) is None


def test_deeply_nested_json_is_a_result_error(tmp_path):
    path = result_path(tmp_path, CELL.cell_id)
    path.write_text('{"env": ' + "[" * 100_000 + "]" * 100_000 + "}")
    with pytest.raises(ResultError, match=f"{CELL.cell_id}.json"):
        read_result(path)


def test_a_newer_schema_version_is_a_clear_error(tmp_path):
    path = result_path(tmp_path, CELL.cell_id)
    path.write_text(json.dumps({**result("ok").to_dict(), "schema_version": 2, "kind": "ptq"}))
    with pytest.raises(ResultError, match=r"schema_version 2.*reads 1.*upgrade"):
        read_result(path)


@pytest.mark.parametrize("version", [0, -7, None, True, 1.0])
def test_a_schema_version_no_run_writes_is_refused(tmp_path, version):
    """Issue 45 item 6: 0, -7 and a missing version were read as version 1."""
    data = result("ok").to_dict()
    if version is None:
        del data["schema_version"]
    else:
        data["schema_version"] = version
    path = result_path(tmp_path, CELL.cell_id)
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=f"{CELL.cell_id}.json.*schema_version"):
        read_result(path)


def test_a_key_given_twice_is_refused(tmp_path):
    """Issue 45 item 6: JSON's last value of a key won, where a reader elsewhere may take the first."""
    path = write_result(tmp_path, result("failed"))
    path.write_text(path.read_text().replace('"status": "failed"', '"status": "failed", "status": "ok"'))
    with pytest.raises(ResultError, match=f"{CELL.cell_id}.json.*key 'status' is there twice"):
        read_result(path)


@pytest.mark.parametrize("epochs, timed", [([], 2), (None, 99)])
def test_a_timed_epoch_the_result_does_not_hold_is_refused(tmp_path, epochs, timed):
    """Issue 45 item 6: an ok result whose timed epoch is missing was dropped in silence, status said done."""
    data = result("ok").to_dict()
    data["epochs"] = data["epochs"] if epochs is None else epochs
    data["timed"]["epoch"] = timed
    path = result_path(tmp_path, CELL.cell_id)
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=f"{CELL.cell_id}.json.*timed.epoch {timed} is none of its epochs"):
        read_result(path)


def test_a_long_error_is_cut_to_its_end_naming_the_file_that_holds_it_whole(tmp_path):
    """Issue 45 item 7: a 10 MB error took status 18 s and 87,408 lines, and was quoted whole."""
    many = "\n".join(f"line {i}" for i in range(87_408)) + "\nRuntimeError: the end\n"  # a traceback's last newline
    path = write_result(tmp_path, Result(CELL.cell_id, CELL.to_dict(), "failed", error=many))
    shown = read_result(path).error
    assert shown.split("\n")[0] == "line 87389" and len(shown.split("\n")) == ERROR_LINES
    assert shown.endswith(f"RuntimeError: the end [cut to its end; the whole error is in {path}]")
    path.unlink()
    path = write_result(tmp_path, Result(CELL.cell_id, CELL.to_dict(), "failed", error="x" * 10_000_000 + " end"))
    shown = read_result(path).error
    assert len(shown) < ERROR_CHARS + 200 and shown.startswith("...x") and "x end [cut to its end" in shown
    assert read_result(write_result(tmp_path / "b", result("failed"))).error == result("failed").error  # short: whole


def test_a_diverged_run_writes_strict_json_and_reads_its_nan_back(tmp_path):
    diverged = result("ok")
    diverged.body.epochs[1].loss = float("nan")
    diverged.body.epochs[1].test_loss = float("inf")
    path = write_result(tmp_path, diverged)

    def refuse(constant):
        raise ValueError(f"not strict JSON: {constant}")

    json.loads(path.read_text(), parse_constant=refuse)  # what a strict parser (jq, JavaScript) accepts
    again = read_result(path)
    assert math.isnan(again.body.epochs[1].loss) and again.body.epochs[1].test_loss == math.inf
    assert again.body.epochs[0].loss == 2.0


def test_read_good_result_only_returns_final_answers(tmp_path):
    assert read_good_result(tmp_path, CELL.cell_id) is None
    write_result(tmp_path, result("timeout"))
    assert read_good_result(tmp_path, CELL.cell_id) is None
    write_result(tmp_path, result("oom", "CUDA out of memory"))
    assert read_good_result(tmp_path, CELL.cell_id).status == "oom"


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664), (0o077, 0o600)])
def test_files_written_whole_follow_the_umask_like_any_other_file(tmp_path, umask, mode):
    import os

    from jobs.core.atomic import replacing, write_bytes_atomic

    old = os.umask(umask)
    try:
        written = [write_result(tmp_path, result("ok")), write_bytes_atomic(tmp_path / "tables.md", b"x")]
        with replacing(tmp_path / "ckpt.pt") as tmp:
            tmp.write_bytes(b"x")
        written.append(tmp_path / "ckpt.pt")
    finally:
        os.umask(old)
    assert {oct(p.stat().st_mode & 0o777) for p in written} == {oct(mode)}


def test_a_result_written_before_test_evaluation_still_reads(tmp_path):
    """An old file: no test figures in its epochs, no test_images in its cell."""
    data = result("ok").to_dict()
    for e in data["epochs"]:
        for key in ("test_loss", "test_accuracy", "test_images", "eval_s"):
            del e[key]
    del data["cell"]["test_images"]
    result_path(tmp_path, CELL.cell_id).write_text(json.dumps(data))
    again = read_result(result_path(tmp_path, CELL.cell_id))
    assert [(e.test_loss, e.test_accuracy, e.test_images, e.eval_s) for e in again.body.epochs] == [(None,) * 4] * 2
    assert again.body.epochs[1].epoch_s == 10.0


def test_test_figures_round_trip_a_nan_loss_included(tmp_path):
    original = result("ok")
    original.body.epochs[0].test_loss, original.body.epochs[0].test_accuracy = 2.1, 0.25
    original.body.epochs[0].test_images, original.body.epochs[0].eval_s = 10_000, 1.5
    original.body.epochs[1].test_loss, original.body.epochs[1].test_accuracy = float("nan"), 0.1
    again = read_result(write_result(tmp_path, original))
    assert (again.body.epochs[0].test_loss, again.body.epochs[0].test_accuracy, again.body.epochs[0].test_images) == (2.1, 0.25, 10_000)
    assert again.body.epochs[0].eval_s == 1.5 and math.isnan(again.body.epochs[1].test_loss)


def test_results_written_before_kinds_were_packages_still_read(tmp_path):
    """Every result carried every kind's keys then: a training result "ptq": null, a failed one
    empty epochs; a PTQ result empty training keys. They read as before; a foreign key that holds
    something is an error."""
    old_ok = result("ok").to_dict() | {"ptq": None}
    old_failed = result("failed").to_dict() | {"epochs": [], "timed": None, "comm": None, "gpu_util": None, "ptq": None}
    for data in (old_ok, old_failed):
        path = result_path(tmp_path, CELL.cell_id)
        path.write_text(json.dumps(data))
        again = read_result(path)
        assert again.status == data["status"] and (again.body is None) == (data["status"] != "ok")
    path.write_text(json.dumps(result("failed").to_dict() | {"allreduce": {"sizes": []}}))
    with pytest.raises(ResultError, match="allreduce is not a field of a train result"):
        read_result(path)


def test_a_job_queued_before_the_move_loads_its_pickled_cell():
    """submitit pickled each queued call with the cell's class path of then: jobs.cell.Cell, jobs.ptq_cell.PTQCell."""
    import pickle

    from jobs.ptq.cell import PTQCell

    for c, old, new in ((CELL, b"jobs.cell", b"jobs.train.cell"), (PTQCell(), b"jobs.ptq_cell", b"jobs.ptq.cell")):
        blob = pickle.dumps(c, protocol=0).replace(new + b"\n", old + b"\n")
        assert old + b"\n" in blob
        assert pickle.loads(blob) == c


EVIDENCE = DDPEvidence(world_size=2, grad_bytes=44_695_848, buffer_bytes=38_568, init_bytes=44_734_416,
                       broadcast_buffers=True, steps_per_epoch=196, order_overlap_without_set_epoch=1.0,
                       order_overlap_with_set_epoch=0.004, bn_rank_spread=None)


@pytest.mark.parametrize("evidence", [None, EVIDENCE, dataclasses.replace(EVIDENCE, bn_rank_spread=0.25)])
def test_ddp_evidence_round_trips_and_a_result_without_it_still_reads(tmp_path, evidence):
    original = result("ok")
    original.body.ddp_evidence = evidence
    data = original.to_dict()
    if evidence is None:
        del data["ddp_evidence"]  # a result written before the block existed
    result_path(tmp_path, CELL.cell_id).write_text(json.dumps(data))
    again = read_result(result_path(tmp_path, CELL.cell_id))
    assert again == original and again.body.ddp_evidence == evidence
    assert read_result(write_result(tmp_path / "again", original)) == original


@pytest.mark.parametrize("damage, named", [
    ({"grad_bytes": "44695848"}, "grad_bytes"), ({"grad_bytes": 1.5}, "grad_bytes"),
    ({"broadcast_buffers": 1}, "broadcast_buffers"), ({"world_size": 1}, "world_size"),
    ({"order_overlap_with_set_epoch": 1.5}, "order_overlap_with_set_epoch"),
    ({"bn_rank_spread": "NaN"}, "bn_rank_spread"), ({"bn_rank_spread": -0.1}, "bn_rank_spread"),
    ({"steps_per_epoch": None}, "steps_per_epoch"), ({"extra": 1}, "extra"),
])
def test_ddp_evidence_of_the_wrong_type_or_range_is_refused_naming_the_field(tmp_path, damage, named):
    data = result("ok").to_dict()
    data["ddp_evidence"] = dataclasses.asdict(EVIDENCE) | damage
    path = result_path(tmp_path, CELL.cell_id)
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match=f"{CELL.cell_id}.json.*ddp_evidence.*{named}"):
        read_result(path)
    path.write_text(json.dumps(data | {"ddp_evidence": []}))
    with pytest.raises(ResultError, match="ddp_evidence must be an object or null"):
        read_result(path)


def edited(data: dict, where: str, value) -> dict:
    """`data` with the entry at `where` ("epochs.0.accuracy") set to `value`."""
    *path, last = where.split(".")
    node = data
    for key in path:
        node = node[int(key)] if isinstance(node, list) else node[key]
    node[int(last) if isinstance(node, list) else last] = value
    return data


@pytest.mark.parametrize("where, value", [
    ("cell.batch_per_gpu", 32),  # the cell edited: it would merge into batch 32's configuration
    ("epochs.0.accuracy", 1.5), ("epochs.1.test_accuracy", -0.1), ("gpu_util.util_median_pct", 150),
    ("epochs.0.epoch", None), ("timed.epoch", "2"), ("timed.train_s", 0), ("timed.epoch_s", -1.0),
    ("epochs.1.epoch_s", 0), ("epochs.1.epoch_s", "Infinity"), ("epochs.0.images", 10**400),
    ("timed.epoch_s", 10**400), ("gpu_util.mem_used_max_gib", 10**400), ("peak_mem_gib", 10**400),
    ("peak_mem_gib", "NaN"), ("comm.busbw_gbps", "Infinity"), ("comm.grad_bytes", 1.5), ("epochs.0.loss", -1.0),
    ("comm.sizes.0.seconds", 0), ("epochs.0.lr", "0.1"),
    ("timed.epoch_s", 1e300), ("epochs.0.epoch_s", 5e-324), ("peak_mem_gib", 1e30),  # a ratio of two would overflow
    ("epochs.1.images_per_s", 5e-324), ("comm.busbw_gbps", 1e13),
])
def test_a_value_no_run_writes_is_one_result_error_naming_file_and_field(tmp_path, where, value):
    data = result("ok").to_dict()
    data["comm"]["sizes"] = [{"bytes": 8, "seconds": 1e-5, "algbw_gbps": 1.0, "busbw_gbps": 1.0}]
    path = result_path(tmp_path, CELL.cell_id)
    path.write_text(json.dumps(edited(data, where, value)))
    field = "cell_id" if where == "cell.batch_per_gpu" else where.split(".")[-1]
    with pytest.raises(ResultError, match=rf"{CELL.cell_id}.json is unreadable \(.*{field}"):
        read_result(path)


def test_a_file_copied_under_another_id_is_refused_its_id_checked_against_its_cell(tmp_path):
    data = result("ok").to_dict()
    for other in ("0123456789ab", "ba9876543210"):  # counted as three repeats before
        result_path(tmp_path, other).write_text(json.dumps(dict(data, cell_id=other)))
        with pytest.raises(ResultError, match="not the id of its cell's fields"):
            read_result(result_path(tmp_path, other))
    repeat = dataclasses.replace(CELL, repeat=1)  # passed off as another repeat, its id made to match
    result_path(tmp_path, repeat.cell_id).write_text(json.dumps(dict(data, cell_id=repeat.cell_id, cell=repeat.to_dict())))
    with pytest.raises(ResultError, match="run_seed 0 is not the seed"):
        read_result(result_path(tmp_path, repeat.cell_id))


@pytest.mark.parametrize("where, value", [("epochs.1.accuracy", 0.0), ("epochs.1.test_accuracy", 0.0),
                                          ("epochs.1.loss", "NaN"), ("epochs.1.test_loss", "Infinity"),
                                          ("epochs.1.data_wait_s", 0), ("comm.exposed_per_step_s", None)])
def test_values_a_real_run_writes_are_read(tmp_path, where, value):
    data = result("ok").to_dict()
    data["epochs"][1].update(test_accuracy=0.5, test_loss=1.0, test_images=100, eval_s=1.0)
    path = result_path(tmp_path, CELL.cell_id)
    path.write_text(json.dumps(edited(data, where, value)))
    read_result(path)
