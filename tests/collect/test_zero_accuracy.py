"""An accuracy of 0 and a NaN loss (a diverged run) are values a real run writes: the answers compare
an accuracy of 0 (collect.verdict.at_zero: the difference rule where a ratio has no log), never a
ValueError out of the ratio rule, and call a NaN loss diverged."""
from __future__ import annotations

import math

import pytest

from collect.report import collect
from collect.verdict import BEYOND, EQUIVALENT, INCONCLUSIVE, at_zero
from tests.collect.dirs import hw5_results
from tests.factories import cell, train_result, write_results


@pytest.mark.parametrize("a, b, outcome, direction, ratio", [
    ((0.8, 0.81, 0.79), (0.0, 0.0, 0.0), BEYOND, -1, 0.0),  # every run collapsed: a total change
    ((0.0, 0.0, 0.0), (0.5, 0.51, 0.52), BEYOND, 1, math.inf),
    ((0.0, 0.0), (0.0, 0.0), EQUIVALENT, 0, 1.0),
    ((0.8, 0.81, 0.79), (0.0, 0.8, 0.81), INCONCLUSIVE, 0, 1.0),  # one repeat of three diverged: a wide spread
    ((0.8,), (0.0,), INCONCLUSIVE, 0, 0.0),  # one run a side: inconclusive by the rule
])
def test_a_side_at_zero_has_a_verdict_without_an_interval(a, b, outcome, direction, ratio):
    v = at_zero(a, b)
    assert (v.outcome, v.direction, v.ratio) == (outcome, direction, ratio)
    assert math.isnan(v.low) and math.isnan(v.high) and (v.n_a, v.n_b) == (len(a), len(b))


def test_q7_with_a_diverged_gradients_only_run_answers(tmp_path):
    results = [r for r in hw5_results() if not (r.cell["engine"] == "ddp" and r.cell["batch_per_gpu"] == 512
                                                and r.cell["gpus_per_node"] == 4 and r.cell["epochs"] == 2)]
    results += [train_result(cell("ddp", 512, 4), test_accuracies=[0.4, 0.8]),
                train_result(cell("ddp", 512, 4, broadcast_buffers=False), test_accuracies=[0.0, 0.0])]
    a = {x.id: x for x in collect(write_results(tmp_path, results, study="hw5")).answers}["A.Q7"]
    # TA5 1: one run a side is no verdict, even 80 points apart: no "lower", and the Yes stands on the reasoning
    assert "test accuracy 0.00% with gradients only against 80.00% with the buffers broadcast (one run each, so no " \
        "verdict: 80.00 points apart" in a.text and a.text.startswith("Yes")


def test_a_training_accuracy_of_zero_answers_q4(tmp_path):
    results = hw5_results()
    for r in results:
        if r.cell["epochs"] == 5 and r.status == "ok":
            for e in r.body.epochs:
                e.accuracy = 0.0
    answers = {x.id: x for x in collect(write_results(tmp_path, results, study="hw5")).answers}
    assert "A.Q4.2" in answers


def test_a_nan_loss_is_a_diverged_run_in_q4(tmp_path):
    results = hw5_results()
    for r in results:
        if r.cell["epochs"] == 5 and r.cell["lr_scaling"] == "linear" and not r.cell["warmup_epochs"] and r.status == "ok":
            r.body.epochs[-1].loss = math.nan  # the usual divergence
    a = {x.id: x for x in collect(write_results(tmp_path, results, study="hw5")).answers}["A.Q4.2"]
    assert "Linear scaling diverged at the scaled rate 0.1 (5th-epoch loss NaN; 0.64 without)" in a.text


def test_a_verdict_at_zero_is_worded_without_an_interval():
    from collect.details import verdict_text

    assert verdict_text(at_zero((0.8, 0.81, 0.79), (0.0, 0.0, 0.0))) == "0.00x: below, beyond the 5% threshold"
