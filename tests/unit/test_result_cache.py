"""orchestrator.watch.result_cache: what status needs of each result, read once and kept (the status
cache) while the file stays the same; a rewritten file is read again, however it was rewritten."""
from __future__ import annotations

import json
import os
import time

import pytest

from jobs.core.layout import STATUS_CACHE, result_path
from jobs.core.result import Result, Status, write_result
from jobs.train.cell import Cell
from jobs.train.result import EpochStats, TrainBody
from orchestrator.watch import result_cache
from orchestrator.watch.result_cache import ResultDigest, ResultCache
from tests.helpers import unwritable

CELLS = tuple(Cell(engine="single", batch_per_gpu=32, seed=i) for i in range(3))
IDS = tuple(c.cell_id for c in CELLS)
ENV = {"started_at": "2026-01-01T10:00:00+00:00", "ended_at": "2026-01-01T10:01:40+00:00", "nodes": ["n1"]}


def result(cell: Cell, status: str = "ok", error: str | None = None) -> Result:
    epochs = [EpochStats(i, 20.0, 18.0, 1000, 50.0, 1.0, 0.5, 0.1, 0.0, 0.0, 18.0) for i in (1, 2)]
    return Result(cell.cell_id, cell.to_dict(), status, ENV, error=error,
                  body=TrainBody(epochs) if status == "ok" else None)


@pytest.fixture
def reads(monkeypatch):
    """The result files read whole, by cell id."""
    seen: list[str] = []
    real = result_cache.read_result

    def counting(path):
        seen.append(path.stem)
        return real(path)
    monkeypatch.setattr(result_cache, "read_result", counting)
    return seen


def age(path, seconds: float = 10.0) -> None:
    """Make a file older than the cache's racy window (as results are, by the time status runs)."""
    then = time.time_ns() - int(seconds * 1e9)
    os.utime(path, ns=(then, then))


def test_a_digest_is_what_status_and_the_ledger_need():
    found = ResultDigest.of(result(CELLS[0]))
    assert found == ResultDigest(Status.OK, None, ENV["started_at"], 100.0, ("n1",), 2000, 40.0)  # made without phases


def test_each_file_is_read_once_then_kept_across_processes(tmp_path, reads):
    for cell in CELLS[:2]:
        age(write_result(tmp_path, result(cell)))
    first = ResultCache(tmp_path).read(IDS)
    assert sorted(first) == sorted(IDS[:2]) and sorted(reads) == sorted(IDS[:2])
    again = ResultCache(tmp_path).read(IDS)  # a new status: from the cache, no file read
    assert again == first and len(reads) == 2


def test_a_result_rewritten_by_a_rename_is_read_again(tmp_path, reads):
    age(write_result(tmp_path, result(CELLS[0], "failed", "RuntimeError: boom")))
    assert ResultCache(tmp_path).read(IDS)[IDS[0]].status == Status.FAILED
    age(write_result(tmp_path, result(CELLS[0])))  # the retry's result replaces it (tmp file + rename)
    assert ResultCache(tmp_path).read(IDS)[IDS[0]].status == Status.OK and len(reads) == 2


def test_a_result_rewritten_in_place_at_the_same_size_and_mtime_is_read_again(tmp_path, reads):
    path = write_result(tmp_path, result(CELLS[0], "failed", "RuntimeError: boom"))
    age(path)
    assert ResultCache(tmp_path).read(IDS)[IDS[0]].error == "RuntimeError: boom"
    before = path.stat()
    path.write_text(path.read_text().replace("boom", "bang"))  # same inode, same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the same mtime: the change time moved
    assert ResultCache(tmp_path).read(IDS)[IDS[0]].error == "RuntimeError: bang" and len(reads) == 2


def test_a_file_changed_just_now_is_not_kept_in_the_cache(tmp_path, reads):
    write_result(tmp_path, result(CELLS[0]))  # its times may not have moved yet if it changes again
    ResultCache(tmp_path).read(IDS)
    ResultCache(tmp_path).read(IDS)
    assert reads == [IDS[0], IDS[0]]


def test_a_deleted_result_is_gone_from_the_cache(tmp_path):
    for cell in CELLS:
        age(write_result(tmp_path, result(cell)))
    ResultCache(tmp_path).read(IDS)
    result_path(tmp_path, IDS[1]).unlink()
    assert sorted(ResultCache(tmp_path).read(IDS)) == sorted([IDS[0], IDS[2]])
    assert IDS[1] not in json.loads((tmp_path / STATUS_CACHE).read_text())["files"]


@pytest.mark.parametrize("damage", [lambda t: t.replace('"ok"', '"oom"'), lambda t: t[:-20], lambda t: "[]"])
def test_an_edited_or_damaged_cache_is_ignored(tmp_path, reads, damage):
    age(write_result(tmp_path, result(CELLS[0])))
    ResultCache(tmp_path).read(IDS)
    cache = tmp_path / STATUS_CACHE
    cache.write_text(damage(cache.read_text()))
    assert ResultCache(tmp_path).read(IDS)[IDS[0]].status == Status.OK and len(reads) == 2  # read the file again


def test_a_read_only_results_dir_still_answers(tmp_path, reads):
    age(write_result(tmp_path, result(CELLS[0])))
    with unwritable(tmp_path):
        assert ResultCache(tmp_path).read(IDS)[IDS[0]].status == Status.OK
        assert not (tmp_path / STATUS_CACHE).exists()


def test_an_unreadable_result_is_its_error_every_time(tmp_path):
    path = result_path(tmp_path, IDS[0])
    path.write_text("{ not json")
    age(path)
    for _ in range(2):
        assert "is unreadable" in str(ResultCache(tmp_path).read(IDS)[IDS[0]])


def test_a_clock_that_cannot_be_read_is_no_run_time():
    for env in ({"started_at": "2026-01-01T10:00:00+00:00"}, {"started_at": "soon", "ended_at": "later"},
                {"started_at": "2026-01-01T10:00:00", "ended_at": "2026-01-01T10:01:40+00:00"}):
        assert ResultDigest.of(Result("c", {}, "failed", env)).run_s is None
