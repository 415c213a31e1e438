"""The two-stage rule `submit --settle` sizes extra repeats by (collect.settle_rule), simulated with
fixed seeds: from 3 to 10 first runs a side, stage 1 judged by collect.verdict, an inconclusive
comparison given its second stage and judged again (the rule allows no third).

Measured (R = 600 comparisons per case, the seeds below), runs per comparison on both sides:
first runs a side    3     4     5     6     7     8     9    10
false "beyond"     0.5%  1.5%  0.8%  0.3%  0.3%  0.2%  0.2%  0.2%   equal medians, 3% noise
"equivalent"        97%   95%   96%   96%   97%   96%   97%   98%   equal medians, 3% noise
settled (beyond)   100%  100%  100%  100%  100%  100%  100%  100%   10% shift, 3% noise
runs spent         55.7  22.4  14.4  14.0  14.4  16.1  18.1  20.0   10% shift, 3% noise
A fixed-size design of the same power (99.6% at 3,000 draws; 7 a side give 98.4%) runs 8 a side,
16 in all: the two stages spend fewer from 5 to 7 first runs, about as many from 8 (their first
runs alone), and more from 3 or 4, whose spread is too rough to size from (df 4 and 6).

The difference scale (collect.verdict.difference: accuracies in points, the answers' 2-point
threshold), 1-point noise:
first runs a side    3     4     5     6     7     8     9    10
false "beyond"     0.3%  0.3%  0.3%  0.3%  0.3%  0.2%  0.3%  0.0%   equal medians
settled (beyond)    99%   99%   99%   99%   99%   99%   99%   99%   a 3-point shift
runs spent         54.9  27.6  15.4  14.1  15.7  16.5  18.4  20.3   a 3-point shift
"""
from __future__ import annotations

import math
import random

import pytest

from collect.settle_rule import PILOT, pilot_size, stage_two_size
from collect.verdict import BEYOND, EQUIVALENT, INCONCLUSIVE, difference, verdict

NOISE = math.log(1.03)  # 3% noise: the log values' standard deviation
SHIFT = math.log(1.10)  # a 10% shift of b against a
R = 600
POINT, POINT_SHIFT = 2.0, 3.0  # the difference case: the answers' threshold (points), a 3-point shift, 1-point noise


def _draw(rng: random.Random, n: int, mu: float) -> list[float]:
    return [math.exp(rng.gauss(mu, NOISE)) for _ in range(n)]


def _points(rng: random.Random, n: int, mu: float) -> list[float]:
    return [rng.gauss(50.0 + mu, 1.0) for _ in range(n)]


def _two_stage(rng: random.Random, first: int, mu: float, points: bool = False) -> tuple[str, int, int]:
    """(outcome, direction, runs spent on both sides) of one comparison under the rule: by the ratio of
    log-normal times, or (points) by the difference of normal accuracies in points."""
    draw = _points if points else _draw

    def judge(a: list[float], b: list[float]) -> tuple[str, int]:
        v = difference(a, b, POINT) if points else verdict(a, b)
        return v.outcome, v.direction

    a, b = draw(rng, first, 0.0), draw(rng, first, mu)
    outcome, direction = judge(a, b)
    if outcome == INCONCLUSIVE:
        n = stage_two_size(a, b, POINT, ratio=False) if points else stage_two_size(a, b)
        a, b = a + draw(rng, n - first, 0.0), b + draw(rng, n - first, mu)
        outcome, direction = judge(a, b)
    return outcome, direction, len(a) + len(b)


def _fixed_power(n: int, seed: int) -> float:
    rng = random.Random(seed)
    return sum(verdict(_draw(rng, n, 0.0), _draw(rng, n, SHIFT)).direction == 1 for _ in range(R)) / R


@pytest.mark.parametrize("first", range(3, 11))
def test_two_stages_keep_false_beyond_under_5_percent_and_settle_a_10_percent_shift(first):
    rng = random.Random(1000 + first)
    null = [_two_stage(rng, first, 0.0) for _ in range(R)]
    shifted = [_two_stage(rng, first, SHIFT) for _ in range(R)]
    assert sum(o == BEYOND for o, _, _ in null) / R <= 0.05
    assert sum(o == EQUIVALENT for o, _, _ in null) / R >= 0.90  # and equal medians are mostly called equivalent
    settled = sum(o == BEYOND and d == 1 for o, d, _ in shifted) / R
    assert settled >= 0.99
    spent = sum(r for _, _, r in shifted) / R
    fixed = 8  # runs a side of the fixed-size design of the same power (test below)
    if first >= 5:  # no more than the fixed design, or than the first runs where those are more already
        assert spent <= 1.05 * 2 * max(first, fixed)
    else:  # 3 or 4 first runs: stage 2 is sized from a spread with df 4 or 6, and pays for it
        assert spent <= 4 * 2 * fixed


@pytest.mark.parametrize("first", range(3, 11))
def test_on_the_difference_scale_too(first):
    rng = random.Random(2000 + first)
    null = [_two_stage(rng, first, 0.0, points=True) for _ in range(R)]
    shifted = [_two_stage(rng, first, POINT_SHIFT, points=True) for _ in range(R)]
    assert sum(o == BEYOND for o, _, _ in null) / R <= 0.05
    assert sum(o == EQUIVALENT for o, _, _ in null) / R >= 0.90
    assert sum(o == BEYOND and d == 1 for o, d, _ in shifted) / R >= 0.97


def test_a_fixed_size_design_needs_8_runs_a_side_for_that_power():
    assert _fixed_power(7, 7) < 0.99 <= _fixed_power(8, 8)


def test_stage_two_is_sized_from_the_spread_by_hand():
    e = math.exp(0.03)  # log values -0.03, 0, 0.03: variance 0.03^2 a side, df 4 (module docstring's example)
    assert stage_two_size([1 / e, 1, e], [1 / e, 1, e]) == 37
    # a ratio past the threshold only needs to stay past it: the half width aims at |c| - band
    assert stage_two_size([1 / e, 1, e], [1.3 / e, 1.3, 1.3 * e]) == 3
    # the difference scale (the docstring's example): variance 1 a side, df 4, t = 2 points; a shift of 3
    # (d = max(1, 3 - 2) = 1) or none (d = t / 2 = 1): (2.776 x 1.2533 x 1 / 1)^2 x 2 = 24.2 -> 25 a side
    assert stage_two_size([50, 51, 52], [53, 54, 55], 2.0, ratio=False) == 25
    assert stage_two_size([50, 51, 52], [50, 51, 52], 2.0, ratio=False) == 25
    # 10 points apart, d = 10 - 2 = 8: (2.776 x 1.2533 / 8)^2 x 2 = 0.38, so the 3 runs measured already
    assert stage_two_size([50, 51, 52], [60, 61, 62], 2.0, ratio=False) == 3


def test_one_run_is_first_brought_to_the_pilot():
    assert pilot_size(1, 1) == PILOT and pilot_size(1, 5) == 5
    with pytest.raises(ValueError, match="2 runs or more"):
        stage_two_size([1.0], [1.0, 1.1])
