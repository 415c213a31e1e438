"""The sweep table and its finding (collect/train/sweep.py, findings_sweep.py): the lab's sweep of the
LR rule x warmup on 2 nodes x 2 GPUs, three seeded repeats each, worked by hand; the best
configuration named with its spread, when it changes and when the next is within its spread.

Every run: 5 epochs, the timed one (2nd) 10 s and the others 1.5 x 10 s: 70 s to train;
images/s = 5 x 50,000 / 70 = 3,571.4. The final test accuracy is the 5th epoch's.
"""
from __future__ import annotations

import pytest

from collect.report import collect
from collect.train import sweep
from collect.view import View
from orchestrator.errors import UserError
from tests.collect.dirs import by
from tests.factories import cell, train_result, write_results
from tests.helpers import cli

# (lr_scaling, warmup_epochs) -> the three repeats' final test accuracies
CLEAR = {("none", 0): (0.80, 0.81, 0.79), ("linear", 0): (0.84, 0.85, 0.83), ("linear", 1): (0.895, 0.90, 0.905),
         ("sqrt", 0): (0.85, 0.86, 0.84), ("sqrt", 1): (0.86, 0.87, 0.85)}
SQRT_BEST = CLEAR | {("sqrt", 1): (0.93, 0.935, 0.925)}
CLOSE = CLEAR | {("linear", 0): (0.83, 0.84, 0.82), ("linear", 1): (0.86, 0.88, 0.90), ("sqrt", 1): (0.86, 0.87, 0.88)}


def two_by_two(rule: str, warmup: int, repeat: int = 0):
    return cell("ddp", 128, 4, nodes=2, epochs=5, lr_scaling=rule, warmup_epochs=warmup, repeat=repeat)


def lab_dir(path, finals, epoch_s=None, pending=()):
    """The sweep's results (and the 1-GPU run, a setup of one configuration: no sweep of its own);
    `pending`: configurations submitted, with no result yet."""
    epoch_s = epoch_s or {}
    results = [train_result(cell("single", 128, epochs=5), test_accuracies=[0.5, 0.6, 0.7, 0.75, 0.79])]
    results += [train_result(two_by_two(rule, warmup, i), epoch_s=epoch_s.get((rule, warmup), 10.0),
                             test_accuracies=[0.3, 0.5, 0.6, 0.7, final])
                for (rule, warmup), runs in finals.items() for i, final in enumerate(runs)]
    waiting = [two_by_two(rule, warmup) for rule, warmup in pending]
    return write_results(path, results, planned=waiting, submitted=waiting)


def sweep_finding(collected):
    return [f for f in collected.findings if f.question == "sweep"]


def test_the_sweep_table_holds_the_swept_setup_sorted_by_test_accuracy(tmp_path):
    collected = collect(lab_dir(tmp_path, CLEAR))
    table = collected.tables["sweep"]
    assert len(table) == 5 and set(table.engine) == {"ddp"}  # the 1-GPU run sweeps nothing
    assert list(zip(table.lr_scaling, table.warmup_epochs)) == [("linear", 1), ("sqrt", 1), ("sqrt", 0),
                                                                ("linear", 0), ("none", 0)]
    best = by(table, lr_scaling="linear", warmup_epochs=1)
    assert (best.test_accuracy, best.test_accuracy_min, best.test_accuracy_max, best.repeats) == (0.90, 0.895, 0.905, 3)
    assert best.time_to_train_s == pytest.approx(70.0) and best.images_per_s == pytest.approx(250_000 / 70)
    grid = next(g for g in collected.grids if g.key == "sweep")
    assert grid.header[:2] == ["lr_scaling", "warmup_epochs"] and "2 nodes x 2 GPUs, DDP" in grid.title
    assert grid.rows[0] == ["linear", "1", "90.00% (89.50%-90.50%)", "70.00 (70.00-70.00)", "3571 (3571-3571)", "3"]
    assert (tmp_path / "sweep.csv").read_text().splitlines()[1].startswith("ddp,128,2,2,")


def test_the_best_configuration_is_named_with_its_spread_and_its_lead_over_the_next(tmp_path):
    """linear + 1 warmup epoch: 90.00% (89.50-90.50); the next, sqrt + 1: 86.00% (85.00-87.00):
    4 points apart, more than either spread (1 and 2 points)."""
    found = sweep_finding(collect(lab_dir(tmp_path, CLEAR)))
    assert len(found) == 1
    assert found[0].text == (
        "2 nodes x 2 GPUs, DDP, batch 128 per GPU, 5 epochs: the best final test accuracy, 90.00% (89.50%-90.50% over "
        "3 runs), with lr_scaling = linear, warmup_epochs = 1; 4.00 points above the next, 86.00% (85.00%-87.00% over 3 "
        "runs) with lr_scaling = sqrt, warmup_epochs = 1.")
    assert found[0].numbers["best_test_accuracy"] == 0.90 and found[0].numbers["next_test_accuracy"] == 0.86
    assert [e.table for e in found[0].evidence] == ["sweep", "sweep"] and found[0].evidence[0].row == 0


def test_the_finding_follows_the_best_when_it_changes(tmp_path):
    found = sweep_finding(collect(lab_dir(tmp_path, SQRT_BEST)))
    assert "the best final test accuracy, 93.00% (92.50%-93.50% over 3 runs), with lr_scaling = sqrt, warmup_epochs = 1; " \
           "3.00 points above the next, 90.00% (89.50%-90.50% over 3 runs) with lr_scaling = linear, warmup_epochs = 1." \
           in found[0].text


def test_a_best_within_the_spread_of_the_next_is_said_not_told_apart(tmp_path):
    """linear + 1: 88% (86-90), spread 4 points; sqrt + 1: 87% (86-88) and sqrt + 0: 85% (84-86) are
    within 4 points of it; linear + 0: 83% (82-84) is 5 points off, none: 8."""
    found = sweep_finding(collect(lab_dir(tmp_path, CLOSE)))
    assert "with lr_scaling = linear, warmup_epochs = 1; the next, 87.00% (86.00%-88.00% over 3 runs) with " \
           "lr_scaling = sqrt, warmup_epochs = 1, is within the spread: the sweep does not tell them apart (2 of the " \
           "other 4 are within it)." in found[0].text
    assert found[0].numbers["within_spread"] == 2


def test_sort_by_time_to_train_puts_the_fastest_first(tmp_path):
    """sqrt + 0 at 8 s per timed epoch: 56 s to train, the others 70 s."""
    results = lab_dir(tmp_path, CLEAR, epoch_s={("sqrt", 0): 8.0})
    collected = collect(results, view=View(sort="time_to_train_s"))
    table = collected.tables["sweep"]
    assert (table.lr_scaling[0], table.warmup_epochs[0], table.time_to_train_s[0]) == ("sqrt", 0, pytest.approx(56.0))
    assert "the best time to train, 56.00 s (all 3 runs), with lr_scaling = sqrt, warmup_epochs = 0; 14.00 s below " \
           "the next" in sweep_finding(collected)[0].text
    fastest = collect(results, view=View(sort="images_per_s")).tables["sweep"].iloc[0]
    assert (fastest.lr_scaling, fastest.images_per_s) == ("sqrt", pytest.approx(250_000 / 56))


def test_configurations_without_a_result_come_last_and_are_said(tmp_path):
    collected = collect(lab_dir(tmp_path, CLEAR, pending=[("sqrt", 2)]))
    table = collected.tables["sweep"]
    assert (table.lr_scaling.iloc[-1], table.warmup_epochs.iloc[-1], table.status.iloc[-1]) == ("sqrt", 2, "pending")
    assert sweep_finding(collected)[0].text.endswith(
        "; without a result: lr_scaling = sqrt, warmup_epochs = 2 (pending).")


def test_a_study_that_sweeps_nothing_has_no_sweep_table(tmp_path):
    collected = collect(write_results(tmp_path, [train_result(cell("single", 32)), train_result(cell("ddp", 32, 2))]))
    assert collected.tables["sweep"].empty and "sweep" not in [g.key for g in collected.grids]
    assert not sweep_finding(collected)
    assert (tmp_path / "sweep.csv").read_text().startswith("engine,batch_per_gpu,")  # the CSV, header only


def test_top_shows_the_best_n_and_sort_names_a_wrong_metric(tmp_path, capsys):
    results = lab_dir(tmp_path, CLEAR)
    code, out, _ = cli(capsys, "collect", "--results", results, "--top", "2", "--tables")
    assert code == 0
    assert "2 of 5 configurations shown; 3 more with a result. Every row is in sweep.csv." in " ".join(out.split())
    code, _, err = cli(capsys, "collect", "--results", results, "--sort", "accuracy")
    assert code == 2 and "--sort accuracy: no such metric; use one of test_accuracy, time_to_train_s, images_per_s" in err
    with pytest.raises(UserError):
        sweep.metric_named("loss")
