"""The test-accuracy table (final test accuracy, time to train, speedup) and Q4's test curves,
worked by hand; and results written before the job evaluated the test set.

The lab's runs, linear LR scaling, 2 epochs, batch 128 per GPU (every epoch but the timed 2nd
takes 1.5x, so time to train = 2.5 x the timed epoch):
  1 GPU        repeats: timed 20, 22, 30 s -> 50, 55, 75 s, median 55; test acc 0.60, 0.62, 0.70 -> 0.62
  2 GPUs DDP   timed 12 s -> 30 s, speedup 55 / 30 = 1.83; test acc 0.58; LR 0.1 x 256/128 = 0.2;
               GPU utilization 91%, peak memory 3.5 GiB (the others sampled none, as on a CPU)
  4 GPUs DDP   timed 8 s  -> 20 s, speedup 2.75; test acc 0.55
  2 nodes x 2  timed 10 s -> 25 s, speedup 2.20; test acc 0.50
  2 GPUs DP    OOM
and one 1-GPU run without remedy from before test evaluation (no test figures).
"""
from __future__ import annotations

import json
import math

import pytest

from collect.train import formulas as f
from collect.train import grids, tables
from tests.collect.training import training
from collect.report import collect
from jobs.core.layout import result_path
from tests.collect.dirs import by
from tests.factories import cell, train_result, write_results

LIN = dict(lr_scaling="linear")


def lab_results():
    base = [train_result(cell("single", 128, repeat=i, **LIN), epoch_s=e, test_accuracies=[0.3, acc])
            for i, (e, acc) in enumerate([(20.0, 0.60), (22.0, 0.62), (30.0, 0.70)])]
    return base + [
        train_result(cell("ddp", 128, 2, **LIN), epoch_s=12.0, test_accuracies=[0.3, 0.58], gpu_util_pct=91.0,
                     peak_mem_gib=3.5),
        train_result(cell("ddp", 128, 4, **LIN), epoch_s=8.0, test_accuracies=[0.3, 0.55]),
        train_result(cell("ddp", 128, 4, nodes=2, **LIN), epoch_s=10.0, test_accuracies=[0.3, 0.50]),
        train_result(cell("dp", 128, 2, **LIN), status="oom"),
        train_result(cell("single", 128), epoch_s=21.0),  # written before test evaluation existed
    ]


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    return training(write_results(tmp_path_factory.mktemp("lab"), lab_results()))


def test_time_to_train_sums_every_epoch_and_test_accuracy_is_the_last_epochs(lab):
    table = tables.accuracy_table(lab.frame, lab.epochs)
    one = by(table, engine="single", lr_scaling="linear")
    assert (one.time_to_train_s, one.time_to_train_s_min, one.time_to_train_s_max) == (55.0, 50.0, 75.0)
    assert (one.test_accuracy, one.test_accuracy_min, one.test_accuracy_max) == (0.62, 0.60, 0.70)
    assert (one.evaluated_images, one.repeats, one.speedup) == (10_000, 3, 1.0)
    two = by(table, engine="ddp", gpus=2)
    assert (two.time_to_train_s, two.test_accuracy, two.lr_after_warmup) == (30.0, 0.58, pytest.approx(0.2))
    assert two.speedup == pytest.approx(55 / 30)
    assert by(table, engine="ddp", gpus=4, nodes=1).speedup == pytest.approx(2.75)
    assert by(table, nodes=2).speedup == pytest.approx(2.2)
    old = by(table, engine="single", lr_scaling="none")
    assert old.time_to_train_s == 52.5 and math.isnan(old.test_accuracy)


def test_rows_one_gpu_first_then_by_gpus_and_engine(lab):
    table = tables.accuracy_table(lab.frame, lab.epochs)
    shape = [(r.engine, r.gpus, r.nodes, r.lr_scaling) for r in table.itertuples()]
    assert shape == [("single", 1, 1, "none"), ("single", 1, 1, "linear"), ("dp", 2, 1, "linear"),
                     ("ddp", 2, 1, "linear"), ("ddp", 4, 1, "linear"), ("ddp", 4, 2, "linear")]


def test_grid_rows_say_status_not_recorded_and_the_lr_rule(lab):
    grid = grids.accuracy_grid(tables.accuracy_table(lab.frame, lab.epochs))
    assert grid.rows == [
        ["1 GPU", "128", "128", "0.1", "2", "not recorded", "52.50", "1.00", "-", "-", "-", "1"],
        ["1 GPU", "128", "128", "linear: 0.1 x 128/128 = 0.1", "2", "62.00% (60.00%-70.00%) *",
         "55.00 (50.00-75.00) *", "1.00", "-", "-", "10,000", "3"],
        ["2 GPUs, DataParallel", "128", "256", "linear: 0.1 x 256/128 = 0.2", "2", "OOM", "", "", "", "", "", "1"],
        ["2 GPUs, DDP", "128", "256", "linear: 0.1 x 256/128 = 0.2", "2", "58.00%", "30.00", "1.83", "91", "3.50",
         "10,000", "1"],
        ["4 GPUs, DDP", "128", "512", "linear: 0.1 x 512/128 = 0.4", "2", "55.00%", "20.00", "2.75", "-", "-",
         "10,000", "1"],
        ["2 nodes x 2 GPUs, DDP", "128", "512", "linear: 0.1 x 512/128 = 0.4", "2", "50.00%", "25.00", "2.20",
         "-", "-", "10,000", "1"],
    ]
    assert grid.caption.startswith("Units: ") and grids.NO_TEST_ACCURACY not in grid.caption
    assert f.FORMULAS["time_to_train"] in grid.formulas and "sum of every epoch's epoch_s" in grid.formulas[0]
    assert "batch per GPU b fixed" in grid.formulas[1]


def test_on_a_cpu_dataparallel_has_no_speedup_as_in_table_1(tmp_path, lab):
    """TA4 22: on a CPU DataParallel runs one process on the global batch: the test table prints what Table 1 prints
    (grids.ONE_PROCESS), not a speedup of 1.01, and says why once; DDP keeps its speedup."""
    runs = [train_result(cell(engine, 16, gpus, **LIN), epoch_s=t, gpu_model="cpu", test_accuracies=[0.3, 0.5])
            for engine, gpus, t in (("single", 1, 2.0), ("dp", 2, 1.98), ("ddp", 2, 1.5))]
    t = training(write_results(tmp_path, runs))
    grid = grids.accuracy_grid(tables.accuracy_table(t.frame, t.epochs))
    speedup = {row[0]: row[7] for row in grid.rows}
    assert speedup["2 GPUs, DataParallel"] == grids.ONE_PROCESS and speedup["2 GPUs, DDP"] == "1.33", speedup
    assert any(x.startswith(f"{grids.ONE_PROCESS}: on a CPU DataParallel runs one process") for x in grid.formulas)
    on_gpus = grids.accuracy_grid(tables.accuracy_table(lab.frame, lab.epochs))
    assert not any(x.startswith(grids.ONE_PROCESS) for x in on_gpus.formulas)  # the note only where it applies


def test_results_from_before_test_evaluation_load_and_say_so(tmp_path):
    """Old files: no test keys in their epochs, no test_images in their cell."""
    runs = [train_result(cell("single", 128), epoch_s=20.0), train_result(cell("ddp", 128, 2), epoch_s=12.0)]
    results = write_results(tmp_path, runs)
    for run in runs:
        path = result_path(results, run.cell_id)
        data = json.loads(path.read_text())
        del data["cell"]["test_images"]
        for epoch in data["epochs"]:
            for key in ("test_loss", "test_accuracy", "test_images", "eval_s"):
                del epoch[key]
        path.write_text(json.dumps(data))
    loaded = training(results)
    assert loaded.epochs.test_accuracy.isna().all() and set(loaded.frame.test_images) == {10_000}
    grid = grids.accuracy_grid(tables.accuracy_table(loaded.frame, loaded.epochs))
    assert grids.NO_TEST_ACCURACY in grid.caption
    assert [row[5] for row in grid.rows] == ["not recorded"] * 2
    assert [row[6:8] for row in grid.rows] == [["50.00", "1.00"], ["30.00", "1.67"]]
    collect(results)
    assert grids.NO_TEST_ACCURACY in (results / "tables.md").read_text()


def test_an_empty_study_has_an_empty_test_table(tmp_path):
    loaded = training(write_results(tmp_path))
    grid = grids.accuracy_grid(tables.accuracy_table(loaded.frame, loaded.epochs))
    assert grid.rows == [] and grid.empty == "No runs in this study."


def test_q4_curves_carry_test_accuracy_per_epoch(mixed_dir):
    loaded = training(mixed_dir)
    curves = tables.q4_curves(loaded.frame, loaded.epochs)
    base = curves[curves.engine == "single"].sort_values("epoch")
    assert list(base.test_accuracy) == [0.35, 0.5, 0.58, 0.63, 0.68]


@pytest.mark.parametrize("lr, batch, ref, rule, expected", [
    (0.1, 512, 128, "linear", 0.4), (0.1, 8192, 128, "linear", 6.4), (0.1, 512, 128, "none", 0.1),
    (0.1, 512, 0, "linear", math.nan), (None, 512, 128, "none", math.nan),
    (0.1, 512, 128, "sqrt", 0.2), (0.1, 8192, 128, "sqrt", 0.8), (0.1, 512, 0, "sqrt", math.nan),
])
def test_scaled_lr_by_hand(lr, batch, ref, rule, expected):
    value = f.scaled_lr(lr, batch, ref, rule)
    assert (math.isnan(value) and math.isnan(expected)) or value == pytest.approx(expected)


def test_the_caption_says_repeats_were_seeded_independently(lab):
    """The lab's results record each repeat's run_seed, each its own: their spread is that of independent runs."""
    table = tables.accuracy_table(lab.frame, lab.epochs)
    assert by(table, engine="single", lr_scaling="linear").seeding == "independent"
    assert by(table, engine="ddp", gpus=2).seeding == ""  # one run: no spread to speak of
    grid = grids.accuracy_grid(table)
    assert "Repeats: 1-3 per configuration (median (min-max) shown), seeded independently (run_seed)." in grid.caption
    assert grid.rows[1][-1] == "3"


def test_old_repeats_that_share_one_seed_collect_and_the_tables_say_their_spread_is_not_independent(tmp_path):
    """Results written before repeats were seeded have no run_seed: every repeat trained with the
    cell's seed. They still collect; their row and the caption say so."""
    old = [train_result(cell("single", 128, repeat=i, **LIN), epoch_s=e, test_accuracies=[0.3, acc], seeded=False)
           for i, (e, acc) in enumerate([(20.0, 0.60), (22.0, 0.62), (30.0, 0.70)])]
    new = [train_result(cell("ddp", 128, 2, repeat=i, **LIN), epoch_s=12.0, test_accuracies=[0.3, acc])
           for i, acc in enumerate([0.58, 0.56])]
    results = write_results(tmp_path, old + new)
    for run in old:  # as written then: no run_seed key at all
        path = result_path(results, run.cell_id)
        data = json.loads(path.read_text())
        del data["run_seed"]
        path.write_text(json.dumps(data))
    loaded = training(results)
    table = tables.accuracy_table(loaded.frame, loaded.epochs)
    one, two = by(table, engine="single"), by(table, engine="ddp")
    assert (one.seeding, one.repeats, one.test_accuracy) == ("shared", 3, 0.62)
    assert two.seeding == "independent"
    grid = grids.accuracy_grid(table)
    assert ("the repeats of 1 of 2 configurations trained from one seed (results written before repeats were "
            "seeded): their spread is not that of independent runs.") in grid.caption
    assert [row[-1] for row in grid.rows] == ["3 (one seed)", "2"]
    collect(results)
    assert "not that of independent runs" in (results / "tables.md").read_text()


def test_an_old_repeat_beside_a_new_one_of_the_same_seed_is_the_same_run(tmp_path):
    """Repeat 0 still trains with the cell's seed, as every old repeat did: an old repeat 1 beside a
    new repeat 0 is the same run twice."""
    runs = [train_result(cell("single", 128), epoch_s=20.0),
            train_result(cell("single", 128, repeat=1), epoch_s=21.0, seeded=False),
            train_result(cell("single", 128, repeat=2), epoch_s=22.0)]
    loaded = training(write_results(tmp_path, runs))
    assert by(tables.accuracy_table(loaded.frame, loaded.epochs), engine="single").seeding == "shared"
