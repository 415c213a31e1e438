"""jobs.core.phases: every second of a job in one phase, read back from the result as written."""
from __future__ import annotations

import json
import os
import time

import pytest

from jobs.core.phases import LAUNCHED_AT_ENV, SLURM_START_ENV, PhaseClock, Phases, launch_s, process_age_s
from jobs.core.result import Result, ResultError, read_result, write_result
from jobs.train.cell import Cell

CELL = Cell(engine="single", batch_per_gpu=32)


class FakeTime:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_clock_gives_each_second_to_the_phase_it_was_in():
    t = FakeTime()
    clock = PhaseClock("setup", now=t)
    t.now += 2  # the envelope's set-up
    clock.switch("body")
    with clock.phase("setup"):  # the kind's own set-up: data, model
        t.now += 3
    with clock.phase("epochs"):
        t.now += 10
    with clock.phase("eval"):
        t.now += 1.5
    with clock.phase("write"):
        t.now += 0.25
    t.now += 0.5  # body, none of its parts
    with clock.phase("measure"):
        t.now += 4
    clock.switch("write")
    t.now += 0.125
    phases = clock.phases(start_s=2.0, launch_s=0.5)
    assert phases == Phases(start_s=2.0, setup_s=5.0, body_s=16.0, write_s=0.375, launch_s=0.5,
                            epochs_s=10.0, eval_s=1.5, measure_s=4.0)
    assert phases.total_s() == 0.5 + 2.0 + 5.0 + 16.0 + 0.375 == t.now - 100 + 2.5
    assert phases.outside_epochs_s() == phases.total_s() - 10.0


def test_a_body_without_parts_records_none_and_a_phase_left_by_an_exception_is_closed():
    t = FakeTime()
    clock = PhaseClock("setup", now=t)
    clock.switch("body")
    with pytest.raises(RuntimeError), clock.phase("write"):
        t.now += 1
        raise RuntimeError("disk full")
    assert clock.current == "body"
    t.now += 2
    phases = clock.phases(start_s=None, launch_s=None)
    assert (phases.body_s, phases.write_s, phases.epochs_s, phases.measure_s) == (2.0, 1.0, None, None)
    assert phases.total_s() == 3.0


def test_an_unknown_phase_is_refused_by_name():
    with pytest.raises(ValueError, match="phase must be one of .*'epochs'.*got 'epoch'"):
        PhaseClock().switch("epoch")


def test_this_process_is_as_old_as_its_clock_says():
    age = process_age_s()
    assert age is not None and 0 < age < time.monotonic() + 1  # this process: the test run's
    assert abs((time.time() - age) - (time.time() - process_age_s())) < 0.05  # one start, read twice


def test_launch_is_the_launchers_time_else_slurms_else_unknown():
    assert launch_s(1000.25, {LAUNCHED_AT_ENV: "1000.0", SLURM_START_ENV: "990"}) == 0.25
    assert launch_s(1000.5, {SLURM_START_ENV: "998"}) == 2.5
    assert launch_s(1000.5, {}) is None and launch_s(1000.5, {LAUNCHED_AT_ENV: "soon"}) is None
    assert launch_s(1000.0, {LAUNCHED_AT_ENV: "1000.5"}) == 0.0, "clocks apart: never a negative phase"


def test_phases_round_trip_and_a_result_written_before_phases_still_reads(tmp_path):
    phases = Phases(start_s=2.5, setup_s=1.0, body_s=8.0, write_s=0.1, launch_s=0.3, epochs_s=6.0, eval_s=1.0,
                    measure_s=0.5)
    result = Result(CELL.cell_id, CELL.to_dict(), "failed", error="boom", phases=phases)
    again = read_result(write_result(tmp_path, result))
    assert again.phases == phases and again == result
    path = tmp_path / f"{CELL.cell_id}.json"
    data = json.loads(path.read_text())
    del data["phases"]  # as every result before phases
    path.write_text(json.dumps(data))
    assert read_result(path).phases is None


@pytest.mark.parametrize("phases, words", [
    ({"start_s": 1, "setup_s": -1.0, "body_s": 1, "write_s": 0}, "phases.setup_s must be a number of seconds, 0 to 31622400 (a year), got -1.0"),
    ({"start_s": 1, "setup_s": 1, "body_s": "NaN", "write_s": 0}, "phases.body_s must be a number of seconds, 0 to 31622400 (a year), got nan"),
    ({"start_s": 1, "setup_s": 1, "body_s": 1}, "phases.write_s must be a number of seconds, 0 to 31622400 (a year), got None"),
    ({"start_s": True, "setup_s": 1, "body_s": 1, "write_s": 0}, "phases.start_s must be a number of seconds, 0 to 31622400 (a year), or null"),
    ({"start_s": 1, "setup_s": 1, "body_s": 1, "write_s": 0, "nap_s": 3}, "phases.nap_s is not a phase"),
    ([1, 2], "phases must be an object"),
    ({"start_s": 1, "setup_s": 1, "body_s": 1e308, "write_s": 0}, "phases.body_s must be a number of seconds"),
    ({"start_s": 10**400, "setup_s": 1, "body_s": 1, "write_s": 0}, "phases.start_s must be a number of seconds"),
    ({"start_s": 1, "setup_s": 1, "body_s": "Infinity", "write_s": 0}, "phases.body_s must be a number of seconds"),
])
def test_a_hand_edited_phase_is_named(tmp_path, phases, words):
    path = write_result(tmp_path, Result(CELL.cell_id, CELL.to_dict(), "failed", error="boom"))
    data = json.loads(path.read_text())
    data["phases"] = phases
    path.write_text(json.dumps(data))
    with pytest.raises(ResultError, match="unreadable") as caught:
        read_result(path)
    assert words in str(caught.value)
    assert os.path.exists(path), "the file is left for the user to move aside"


@pytest.mark.parametrize("huge", [1e308, 10**400])
def test_a_huge_phase_is_one_unreadable_file_for_status_collect_and_submit(tmp_path, capsys, huge):
    from tests.factories import train_result, write_results
    from tests.helpers import cli

    result = train_result(CELL)
    result.phases = Phases(start_s=1.0, setup_s=1.0, body_s=1.0, write_s=0.0)
    write_results(tmp_path, [result])
    path = tmp_path / f"{CELL.cell_id}.json"
    path.write_text(path.read_text().replace('"body_s": 1.0', f'"body_s": {huge!r}'))
    assert str(huge) in path.read_text()
    for verb in ("status", "collect", "submit"):  # submit leaves an unreadable result's cell alone
        code, out, err = cli(capsys, verb, "--study", "by-hand", "--results", tmp_path, "--executor", "local")[:3] \
            if verb == "submit" else cli(capsys, verb, "--study", "by-hand", "--results", tmp_path)
        assert "Traceback" not in err and "Overflow" not in out + err, (verb, err)
        assert str(path) in out + err and "phases.body_s" in out + err, (verb, out, err)
