"""collect's overhead view: per configuration, the epochs against everything else in its jobs,
and the study's total, worked by hand."""
from __future__ import annotations

import math

import pytest

from collect.load import load
from tests.collect.training import training
from collect.render import to_markdown
from collect.train import build_grids, build_tables
from collect.train.overhead import CONFIGURATION, TOTAL, overhead_grid, overhead_table
from jobs.core.phases import Phases
from tests.factories import cell, train_result, write_results

ONE = cell("single", 32)
DDP = cell("ddp", 32, gpus=2)


def before_phases(c):
    """A result written before the job recorded its phases."""
    out = train_result(c)
    out.phases = None
    return out


def with_phases(c, repeat_phases: Phases, status: str = "ok"):
    out = train_result(c, status)
    out.phases = repeat_phases
    return out


def phases(start: float, epochs: float, measure: float = 0.0, launch=0.5) -> Phases:
    """A job of launch + start + 1 s set-up + a body (epochs, 2 s evaluation, measure, 0.5 s other) + 0.25 s writes."""
    return Phases(start_s=start, setup_s=1.0, body_s=epochs + 2.0 + measure + 0.5, write_s=0.25, launch_s=launch,
                  epochs_s=epochs, eval_s=2.0, measure_s=measure)


@pytest.fixture
def results_dir(tmp_path):
    runs = [
        with_phases(ONE, phases(start=2.0, epochs=10.0)),  # job 0.5 + 2 + 1 + 12.5 + 0.25 = 16.25
        with_phases(ONE.__class__(**{**ONE.to_dict(), "repeat": 1}), phases(start=1.0, epochs=12.0)),  # 17.25
        with_phases(ONE.__class__(**{**ONE.to_dict(), "repeat": 2}), phases(start=3.0, epochs=11.0)),  # 18.25
        with_phases(DDP, phases(start=0.5, epochs=4.0, measure=6.0, launch=None)),  # 0.5+1+12.5+0.25 = 14.25
        with_phases(cell("ddp", 128, gpus=2), phases(start=0.5, epochs=1.0, launch=None), status="failed"),  # 5.25
        before_phases(cell("dp", 32, gpus=2)),
    ]
    return write_results(tmp_path / "runs", runs)


def test_each_configuration_shows_its_median_run_and_the_study_its_sum(results_dir):
    table = overhead_table(training(results_dir).frame)
    rows = {(r.engine, r.batch_per_gpu): r for r in table[table.scope == CONFIGURATION].itertuples()}
    one = rows["single", 32]
    assert (one.job_s, one.epochs_s, one.start_s) == (17.25, 11.0, 2.5)  # medians of 16.25/17.25/18.25 ...
    assert one.overhead_s == pytest.approx(6.25) and one.eval_s == 2.0 and one.other_s == 0.5
    ddp = rows["ddp", 32]
    assert (ddp.job_s, ddp.epochs_s, ddp.measure_s, ddp.start_s) == (14.25, 4.0, 6.0, 0.5)
    assert ddp.epochs_share == pytest.approx(4.0 / 14.25) and ddp.gpu_hours == pytest.approx(14.25 * 2 / 3600)
    assert math.isnan(rows["dp", 32].job_s), "no phases: no numbers"
    assert rows["ddp", 128].status == "failed"
    (total,) = table[table.scope == TOTAL].itertuples()
    assert total.runs == 5 and total.repeats == 4, "every run with phases, the failed one too"
    assert total.job_s == pytest.approx(16.25 + 17.25 + 18.25 + 14.25 + 5.25)
    assert total.epochs_s == pytest.approx(10 + 12 + 11 + 4 + 1)
    assert total.epochs_share == pytest.approx(38 / 71.25)
    assert total.gpu_hours == pytest.approx((16.25 + 17.25 + 18.25 + 2 * 14.25 + 2 * 5.25) / 3600)


def test_the_grid_names_each_configuration_and_the_total(results_dir):
    grid = overhead_grid(overhead_table(training(results_dir).frame))
    names = [row[0] for row in grid.rows]
    assert names == ["1 GPU", "2 GPUs, DataParallel", "2 GPUs, DDP", "2 GPUs, DDP", "study total (5 runs, summed)"]
    assert grid.rows[0][2:6] == ["17.25", "11.00", "6.25", "63.8%"]
    assert grid.rows[1][2] == "no phases recorded" and grid.rows[3][2] == "failed"
    assert "| study total (5 runs, summed) |" in to_markdown(grid)


def test_results_written_before_phases_say_so(tmp_path):
    loaded = load(write_results(tmp_path / "runs", [before_phases(ONE)]))
    grid = [g for g in build_grids(build_tables(loaded)) if g.key == "overhead"][0]
    assert grid.empty.startswith("No run recorded its phases")
