"""The sweep table and its answer (collect/train/sweep.py; the lab's best-accuracy question,
collect.train.answers_lab): the lab's sweep of the LR rule x warmup on 2 nodes x 2 GPUs, three
seeded repeats each, worked by hand; the best configuration named with its spread, when it changes
and when the next is not told apart from it (collect.verdict).

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
    `pending`: configurations submitted, with no result yet. The 1-GPU run warms up, so it is no
    Part A timing run and the study is the lab's (its best-accuracy question is asked)."""
    epoch_s = epoch_s or {}
    results = [train_result(cell("single", 128, epochs=5, lr_scaling="linear", warmup_epochs=1), test_accuracies=[0.5, 0.6, 0.7, 0.75, 0.79])]
    results += [train_result(two_by_two(rule, warmup, i), epoch_s=epoch_s.get((rule, warmup), 10.0),
                             test_accuracies=[0.3, 0.5, 0.6, 0.7, final])
                for (rule, warmup), runs in finals.items() for i, final in enumerate(runs)]
    waiting = [two_by_two(rule, warmup) for rule, warmup in pending]
    return write_results(path, results, planned=waiting, submitted=waiting)


def best(collected):
    """The lab's best-accuracy answer (None where the study does not ask it)."""
    return next((a for a in collected.answers if a.id == "lab.best"), None)


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
    """linear + 1 warmup epoch: 90.00% (89.50-90.50); the next, sqrt + 1: 86.00% (85.00-87.00).
    The verdict on the next against the best is a difference in points (issue 35): -4, its interval
    below 0 and past the 2-point threshold: lower; the details show the verdict's numbers."""
    answer = best(collect(lab_dir(tmp_path, CLEAR)))
    assert "The best test accuracy on 2 nodes x 2 GPUs, DDP is 90.00% (89.50%-90.50% over 3 runs)" in answer.text
    assert "The next, LR sqrt" in answer.text and "86.00% (85.00%-87.00% over 3 runs)" in answer.text
    assert [e.table for e in answer.record.evidence] == ["sweep", "sweep"] and answer.record.evidence[0].row == 0
    verdict = next(line for line in answer.details if line.startswith("verdict: "))
    assert verdict.startswith("verdict: -4 (") and "below, beyond" in verdict and "is lower" in answer.text


def test_the_answer_follows_the_best_when_it_changes(tmp_path):
    answer = best(collect(lab_dir(tmp_path, SQRT_BEST)))
    assert "is 93.00% (92.50%-93.50% over 3 runs) of 10,000 test images, with LR sqrt" in answer.text
    assert "90.00% (89.50%-90.50% over 3 runs)" in answer.text


def test_a_best_within_the_spread_of_the_next_is_not_told_apart(tmp_path):
    """linear + 1: 88% (86-90); sqrt + 1: 87% (86-88): 1 point apart, inside the 2-point band with
    a wide interval: never "lower"."""
    answer = best(collect(lab_dir(tmp_path, CLOSE)))
    assert "is lower" not in answer.text
    assert any(line.startswith("verdict: -1 (") and ("equivalent" in line or "inconclusive" in line)
               for line in answer.details)


def test_sort_by_time_to_train_puts_the_fastest_first(tmp_path):
    """sqrt + 0 at 8 s per timed epoch: 56 s to train, the others 70 s."""
    results = lab_dir(tmp_path, CLEAR, epoch_s={("sqrt", 0): 8.0})
    collected = collect(results, view=View(sort="time_to_train_s"))
    table = collected.tables["sweep"]
    assert (table.lr_scaling[0], table.warmup_epochs[0], table.time_to_train_s[0]) == ("sqrt", 0, pytest.approx(56.0))
    fastest = collect(results, view=View(sort="images_per_s")).tables["sweep"].iloc[0]
    assert (fastest.lr_scaling, fastest.images_per_s) == ("sqrt", pytest.approx(250_000 / 56))


def test_configurations_without_a_result_come_last(tmp_path):
    collected = collect(lab_dir(tmp_path, CLEAR, pending=[("sqrt", 2)]))
    table = collected.tables["sweep"]
    assert (table.lr_scaling.iloc[-1], table.warmup_epochs.iloc[-1], table.status.iloc[-1]) == ("sqrt", 2, "pending")


def test_a_study_that_sweeps_nothing_has_no_sweep_table(tmp_path):
    collected = collect(write_results(tmp_path, [train_result(cell("single", 32)), train_result(cell("ddp", 32, 2))]))
    assert collected.tables["sweep"].empty and "sweep" not in [g.key for g in collected.grids]
    assert best(collected) is None or best(collected).record.accuracy is None
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
