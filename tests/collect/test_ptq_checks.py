"""What Part B's Q2 and Q4 rest on beyond the notebook (collect/ptq/checks.py), in their records and
details: the sweep's bits per choice judged by the paired difference verdict (threshold 1 point), and
the integer-only run against the float simulation.

The hand-built study's sweep (tests/collect/dirs.py), the same penalty on every seed (no spread):
  weights   tensor, max: 8 bits +0, 4 bits -4 -> kept to 8, dropped at 4
            channel, max: 4 bits -1.00 exactly (0.51 - 0.52 in floats is -1.0000000000000009): within
  activations  max, 16 images: 8 bits -1.00 (within), 2 bits -40 -> kept to 8, dropped at 2
"""
from __future__ import annotations

import pandas as pd
import pytest

from collect.ptq.checks import sweep_choices
from collect.report import collect
from tests.collect.dirs import ptq_results, write_ptq


@pytest.fixture(scope="module")
def answers(tmp_path_factory):
    return {a.id: a for a in collect(write_ptq(tmp_path_factory.mktemp("ptq"))).answers}


def test_the_sweep_by_hand_in_q2_and_q4(answers):
    weights = {c.choice: c for c in answers["B.Q2"].record.sweep}
    assert (weights["tensor, max"].lowest_kept, weights["tensor, max"].first_dropped) == (8, 4)
    assert weights["tensor, max"].at[1].delta_points.value == pytest.approx(-4.0)
    assert (weights["channel, max"].lowest_kept, weights["channel, max"].first_dropped) == (4, None)
    activations = {c.choice: c for c in answers["B.Q4"].record.sweep}
    assert (activations["max, 16 images"].lowest_kept, activations["max, 16 images"].first_dropped) == (8, 2)
    line = next(d for d in answers["B.Q2"].details if d.startswith("sweep 1: choice tensor, max"))
    assert "bits 4; delta points -4 points (all 3 runs); verdict -4 (-4 to -4): below, beyond the 1 threshold" in line
    assert any(e.table == "ptq_sweep" for e in answers["B.Q2"].record.evidence)


def test_the_integer_run_agrees_or_counts_the_images_that_differ(answers, tmp_path):
    first = answers["B.Q4"].record.integer[0]
    assert (first.name, first.images, first.prediction_mismatches, first.bad_values) == ("Net W8A8", 3000, 0, 0)
    assert answers["B.Q4"].record.integer[-1].images is None  # the variants whose inputs were only checked
    differ = next(a for a in collect(write_ptq(tmp_path, ptq_results(mismatches=7))).answers if a.id == "B.Q4")
    assert differ.record.integer[0].prediction_mismatches == 7
    assert any("prediction mismatches 7" in d for d in differ.details)


def rows(deltas: dict[int, tuple[float, ...]]) -> pd.DataFrame:
    return pd.DataFrame([dict(setup="", part="weights", choice="tensor, max", name=f"Net W{b}", bits=b,
                              delta=sorted(d)[len(d) // 2], delta_min=min(d), delta_max=max(d), repeats=len(d),
                              delta_values=d) for b, d in sorted(deltas.items(), reverse=True)])


def test_a_drop_is_claimed_only_where_the_verdict_measures_it():
    # three seeds: 8 bits within (+-0.1 points), 4 bits -3 points with 0.1 spread: beyond, below
    (choice,), _ = sweep_choices(rows({8: (0.0, 0.001, -0.001), 4: (-0.03, -0.031, -0.029)}), "weights")
    assert (choice.lowest_kept, choice.first_dropped) == (8, 4)
    # one seed: -3 points is one run, inconclusive by rule: no drop is measured, none claimed
    (one,), _ = sweep_choices(rows({8: (0.0,), 4: (-0.03,)}), "weights")
    assert (one.lowest_kept, one.first_dropped) == (4, None) and one.at[1].verdict.one_run
