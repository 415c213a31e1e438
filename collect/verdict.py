"""The one comparison rule: two groups of repeats (a and b) of one figure, how b differs from a
with an interval, and one of three verdicts. Every comparative word goes through it: the answers
and their details (collect.questions), `collect --compare` and the benchmarks' summaries.

Two scales, one rule. `verdict` compares positive values (seconds, images/s, GB/s) by their ratio;
`difference` compares values on their own scale (accuracy deltas in points, values at or below
zero) by b - a. Both judge a centre c and an interval c -+ h against a band (-w, w) around "no
difference" (0):

    ratio (verdict):       x = ln a_i, y = ln b_i, c = ln(median(b) / median(a)), w = ln(1 + t)
    difference:            x = a_i,    y = b_i,    c = median(b) - median(a),      w = t
    s_a^2, s_b^2  the sample variances of x and y (n - 1 in the divisor)
    se      = sqrt(pi/2) * sqrt(s_a^2 / n_a + s_b^2 / n_b)     (Welch; sqrt(pi/2): a median's
              standard error over a mean's, for normal values, so the interval holds for medians)
    df      = (s_a^2/n_a + s_b^2/n_b)^2 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1)), rounded down
    h       = q * se, q = the t quantile at (1 + confidence) / 2 with df
    interval: ratio r * exp(-+ h) with r = exp(c); difference c -+ h

A Welch t-interval centred on the medians' ratio or difference (robust to one slow repeat) and
widened to a median's standard error. It is exact arithmetic, no random draws: the same inputs
always give the same verdict. The threshold t is a fraction for a ratio (0.05 = 5%) and in the
values' own unit for a difference (0.01 = 1 point of an accuracy held as a fraction). Paired values
(`paired`: each seed's delta, a few seeds) take the textbook paired t interval on the deltas' mean instead
(c = mean(d), se = s_d / sqrt(n), df = n - 1), judged by the same rule.

The verdict:
    beyond      the interval excludes "no difference" (c - h > 0 or c + h < 0) and |c| > w: a
                difference is measured and it is larger than the threshold; direction +1 when b is
                above a, -1 below;
    equivalent  the interval lies within the band (-w <= c - h and c + h <= w): any difference is
                at most t;
    inconclusive otherwise, with roughly how many repeats per side would settle it.

Why "|c| > w" and not "the whole interval outside the band": at n = 5 per side with 3% noise
a 10% change would be found only about a third of the time by the stricter rule; this one finds
it about 9 times in 10 while a same-distribution pair is called "beyond" under 5% of the time
(tests/collect/test_verdict.py simulates both). The interval is always shown beside the verdict,
so a "beyond" whose interval reaches into the band says so.

Both comparisons with w allow for rounding (ROUNDING, relative): 0.51 - 0.52 is -0.0100000000000000009
in floats, a drop of exactly 1 point, within a 1-point threshold, not beyond it.

One run on either side: no spread is measured, always inconclusive (`one_run`). An answer may still
say which way such a pair went where it is past the same band (`leaning`): the one fallback, here.
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Optional

from collect.sides import Sides

BEYOND, EQUIVALENT, INCONCLUSIVE = "beyond", "equivalent", "inconclusive"
MEDIAN_SE = math.sqrt(math.pi / 2)  # a median's standard error over a mean's, for normal values
ROUNDING = 1e-9  # relative: a centre or an end equal to the band up to floats' rounding counts as on it
MOST_REPEATS = 1000  # repeats_needed is capped here: a difference this close to the threshold is never settled
# One run a side: single runs of one setting differed by up to this (the shared H100 set's 1 GPU at batch 32: 15.34 to
# 19.73 s over 3 runs), so a step of a trend between single runs is claimed only past it (`leaning(v, SINGLE_RUN_NOISE)`)
SINGLE_RUN_NOISE = 0.25


@dataclass(frozen=True)
class Verdict:
    """The comparison of b against a: ratio = median(b) / median(a), its interval (low, high) at
    the confidence asked, and the verdict (see the module's docstring for the rule)."""

    ratio: float  # median(b) / median(a)
    low: float  # the ratio's interval, lower end (95% by default)
    high: float  # upper end
    outcome: str  # "beyond" | "equivalent" | "inconclusive"
    direction: int  # +1: b above a beyond the threshold, -1: below, 0 otherwise
    threshold: float  # the practical threshold as a fraction, e.g. 0.05
    n_a: int
    n_b: int
    repeats_needed: Optional[int]  # inconclusive only: roughly how many repeats per side would settle it
    # What was compared, with the cells each side's values come from, where an answer says (`submit --settle`
    # adds repeats to them): not numbers, so not in `collect --json`'s numbers, and no part of the verdict's equality.
    sides: Optional[Sides] = field(default=None, compare=False, metadata={"cells": True})

    @property
    def one_run(self) -> bool:
        """A side with a single run: no spread measured, so always inconclusive."""
        return min(self.n_a, self.n_b) < 2

    @property
    def percent(self) -> float:
        """The change of b against a in percent: 100 (r - 1). 1.10 -> 10.0, 0.90 -> -10.0."""
        return 100.0 * (self.ratio - 1.0)


def verdict(a: Sequence[float], b: Sequence[float], threshold: float = 0.05, confidence: float = 0.95) -> Verdict:
    """The verdict on b against a by their ratio (module docstring: the formula and the rule).
    ValueError when a side is empty, holds a NaN, infinite or non-positive value, or the threshold
    or confidence is out of range."""
    values_a, values_b = _numbers("a", a, positive=True), _numbers("b", b, positive=True)
    _check(threshold, confidence, "a positive fraction (0.05 = 5%)")
    ratio = statistics.median(values_b) / statistics.median(values_a)
    low, high, outcome, direction, needed = _judge([math.log(v) for v in values_a], [math.log(v) for v in values_b],
                                                   math.log(ratio), math.log1p(threshold), confidence)
    return Verdict(ratio, math.exp(low), math.exp(high), outcome, direction, threshold, len(values_a),
                   len(values_b), needed)


@dataclass(frozen=True)
class Difference:
    """The comparison of b against a on the values' own scale: delta = median(b) - median(a), its
    interval (low, high) and the verdict (the module's docstring: the rule, with w = threshold)."""

    delta: float  # median(b) - median(a), in the values' unit
    low: float  # the delta's interval, lower end (95% by default)
    high: float  # upper end
    outcome: str  # "beyond" | "equivalent" | "inconclusive"
    direction: int  # +1: b above a beyond the threshold, -1: below, 0 otherwise
    threshold: float  # the practical threshold in the values' unit, e.g. 0.01 (1 point of a fraction)
    n_a: int
    n_b: int
    repeats_needed: Optional[int]  # inconclusive only: roughly how many repeats per side would settle it
    sides: Optional[Sides] = field(default=None, compare=False, metadata={"cells": True})  # as Verdict's

    @property
    def one_run(self) -> bool:
        """A side with a single run: no spread measured, so always inconclusive."""
        return min(self.n_a, self.n_b) < 2


def difference(a: Sequence[float], b: Sequence[float], threshold: float, confidence: float = 0.95) -> Difference:
    """The verdict on b against a by their difference b - a, for values of any sign (accuracy
    deltas, changes at or below zero); the threshold is in the values' unit. Example: a = 0.50,
    0.52, 0.54 and b = 0.40, 0.42, 0.44, threshold 0.01: delta -0.10, s^2 = 0.0004 a side, se =
    1.2533 sqrt(2 x 0.0004 / 3) = 0.020466, df 4, q 2.7764, interval -0.1568 .. -0.0432: beyond,
    direction -1. ValueError as `verdict`, but a value may be zero or negative."""
    values_a, values_b = _numbers("a", a, positive=False), _numbers("b", b, positive=False)
    _check(threshold, confidence, "positive, in the values' unit (0.01 = 1 point of a fraction)")
    delta = statistics.median(values_b) - statistics.median(values_a)
    low, high, outcome, direction, needed = _judge(values_a, values_b, delta, threshold, confidence)
    return Difference(delta, low, high, outcome, direction, threshold, len(values_a), len(values_b), needed)


def paired(deltas: Sequence[float], threshold: float, confidence: float = 0.95) -> Difference:
    """The verdict on paired deltas (b_i - a_i of the same seed) against no change, by a paired t interval on
    their mean (a median's standard error holds only for many values: the seeds are a few):
        delta = mean(d), h = q s / sqrt(n), q the t quantile at (1 + confidence) / 2 with n - 1 degrees of freedom,
    judged by the module's rule with w = threshold. Example: deltas 2.24, 3.54, 3.60, threshold 1: mean 3.1267,
    s = 0.76846, s / sqrt 3 = 0.44367, q(0.975, 2) = 4.3027, interval 1.2177 .. 5.0356: beyond, direction +1.
    One delta: no spread, inconclusive (`one_run`)."""
    values = _numbers("b", deltas, positive=False)
    _check(threshold, confidence, "positive, in the values' unit (0.01 = 1 point of a fraction)")
    mean, n = statistics.fmean(values), len(values)
    if n < 2:
        return Difference(mean, math.nan, math.nan, INCONCLUSIVE, 0, threshold, n, n, None)
    var = variance(values)
    half = t_quantile((1 + confidence) / 2, n - 1) * math.sqrt(var / n)
    outcome, direction = _decide(mean, mean - half, mean + half, threshold)
    needed = repeats_needed(mean, 0.0, var, threshold, confidence, n + 1, 1.0) if outcome == INCONCLUSIVE else None
    return Difference(mean, mean - half, mean + half, outcome, direction, threshold, n, n, needed)


def leaning(v: Verdict | Difference, single: Optional[float] = None) -> int:
    """Which way b went: the verdict's direction where it decided; with one run a side (no spread, so
    inconclusive by rule), -1 / +1 where the single pair is past the very band the verdict uses
    (c < -w or c > w: a ratio under 1/(1+t) or over 1+t; a difference under -t or over t), else 0;
    `single` replaces t there where a claim needs more than the threshold (SINGLE_RUN_NOISE: a trend's step).
    Example, t = 0.05: ratios 0.951 -> -1 (ln 0.951 = -0.0502 < -0.0488), 0.96 -> 0, 1.049 -> 0, 1.06 -> +1;
    single = 0.25: 0.93 -> 0, 0.79 -> -1 (ln 0.79 = -0.236 < -0.223)."""
    if not v.one_run:
        return v.direction
    t = v.threshold if single is None else single
    if isinstance(v, Verdict):  # a ratio of 0 (verdict.at_zero: a diverged run) is as far below as it goes
        centre, band = (math.log(v.ratio) if v.ratio > 0 else -math.inf), math.log1p(t)
    else:
        centre, band = v.delta, t
    edge = band * (1 + ROUNDING)
    return -1 if centre < -edge else 1 if centre > edge else 0


COUNT_Z = 1.96  # a count's 95% interval, normal approximation


def count_error(p_a: float, p_b: float, images: float) -> float:
    """The half width (95%) of the difference of two accuracies, each a fraction of `images` test images
    (binomial, normal approximation): COUNT_Z sqrt(pa (1 - pa) / n + pb (1 - pb) / n), as a fraction. A
    smaller difference is inside what that many images can tell apart, whatever the runs. Example: 0.84 and
    0.81 of 100 images: 1.96 sqrt(0.1344 / 100 + 0.1539 / 100) = 0.1052 (10.5 points)."""
    return COUNT_Z * math.sqrt((p_a * (1 - p_a) + p_b * (1 - p_b)) / images)


def _check(threshold: float, confidence: float, unit: str) -> None:
    if not threshold > 0 or math.isinf(threshold):
        raise ValueError(f"threshold must be {unit}, not {threshold}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (0.95 = 95%), not {confidence}")


def _judge(xs: list[float], ys: list[float], centre: float, band: float,
           confidence: float) -> tuple[float, float, str, int, Optional[int]]:
    """The rule on one scale (the module's docstring): the interval centre -+ h, the outcome, the
    direction and, inconclusive with repeats, the repeats a side that would settle it."""
    if min(len(xs), len(ys)) < 2:
        return math.nan, math.nan, INCONCLUSIVE, 0, None
    var_a, var_b = variance(xs), variance(ys)
    se = MEDIAN_SE * math.sqrt(var_a / len(xs) + var_b / len(ys))
    half = t_quantile((1 + confidence) / 2, welch_df(var_a, len(xs), var_b, len(ys))) * se
    low, high = centre - half, centre + half
    outcome, direction = _decide(centre, low, high, band)
    if outcome != INCONCLUSIVE:
        return low, high, outcome, direction, None
    needed = repeats_needed(centre, var_a, var_b, band, confidence, min(len(xs), len(ys)) + 1)
    return low, high, INCONCLUSIVE, 0, needed


def _decide(centre: float, low: float, high: float, band: float) -> tuple[str, int]:
    """The module's rule on an interval low..high around `centre`: (outcome, direction)."""
    edge = band * (1 + ROUNDING)
    if (low > 0 or high < 0) and abs(centre) > edge:
        return BEYOND, (1 if centre > 0 else -1)
    if -edge <= low and high <= edge:
        return EQUIVALENT, 0
    return INCONCLUSIVE, 0


def _numbers(side: str, values: Sequence[float], positive: bool) -> list[float]:
    """A side's values as floats; ValueError naming the side when one cannot be used."""
    if len(values) == 0:
        raise ValueError(f"side {side} has no values: a verdict needs at least one run on each side")
    numbers = []
    for value in values:
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not math.isfinite(number) or (positive and number <= 0):
            raise ValueError(f"side {side} holds {value!r}: every value must be a finite number"
                             + (" above 0" if positive else ""))
        numbers.append(number)
    return numbers


def variance(values: Sequence[float]) -> float:
    """The sample variance: sum (v - mean)^2 / (n - 1). Example: 1, 2, 3 -> (1 + 0 + 1) / 2 = 1."""
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / (len(values) - 1)


def welch_df(var_a: float, n_a: int, var_b: float, n_b: int) -> int:
    """Welch-Satterthwaite degrees of freedom, rounded down, at least 1:
    df = (va/na + vb/nb)^2 / ((va/na)^2/(na-1) + (vb/nb)^2/(nb-1)).
    No spread on either side (both variances 0): na + nb - 2.
    Example: va = vb, na = nb = 5 -> (2v/5)^2 / (2 (v/5)^2 / 4) = 8."""
    ea, eb = var_a / n_a, var_b / n_b
    if ea + eb == 0:
        return n_a + n_b - 2
    df = (ea + eb) ** 2 / (ea**2 / (n_a - 1) + eb**2 / (n_b - 1))
    return max(1, math.floor(df + 1e-9))


def repeats_needed(centre: float, var_a: float, var_b: float, band: float, confidence: float, at_least: int = 2,
                   se_factor: float = MEDIAN_SE) -> int:
    """Roughly how many repeats per side would settle an inconclusive verdict if the log ratio
    (centre) and the log values' variances stayed as measured: the least n >= at_least whose
    interval, n runs a side, has a half width
        q(welch_df(var_a, n, var_b, n)) * sqrt(pi/2) * sqrt((var_a + var_b) / n)
    below the margin: |centre| (to exclude 1) when the ratio is beyond the band, else
    band - |centre| (to fit inside it). Capped at MOST_REPEATS. Example: centre 0.02, both
    variances 0.03^2, band ln 1.05 = 0.0488, margin 0.0288: n = 15 (df 28) gives 2.048 * 1.2533 *
    0.03 * sqrt(2/15) = 0.0281 < 0.0288, n = 14 gives 0.0292 -> 15. `se_factor`: sqrt(pi/2) for medians, 1 for a
    mean (`paired`)."""
    margin = abs(centre) if abs(centre) > band else band - abs(centre)
    if var_a + var_b == 0:
        return at_least
    p = (1 + confidence) / 2

    def settles(n: int) -> bool:  # the half width falls as n grows (df grows, 1/n falls)
        return t_quantile(p, welch_df(var_a, n, var_b, n)) * se_factor * math.sqrt((var_a + var_b) / n) < margin

    if settles(at_least):
        return at_least
    low, high = at_least, MOST_REPEATS  # not settled at low; settled at high, if at all
    if not settles(high):
        return MOST_REPEATS
    while high - low > 1:
        n = (low + high) // 2
        low, high = (low, n) if settles(n) else (n, high)
    return high


@lru_cache(maxsize=4096)
def t_quantile(p: float, df: int) -> float:
    """Student's t quantile: the x with P(T <= x) = p for T with df (whole) degrees of freedom,
    0.5 <= p < 1: Newton's steps x -= (t_cdf(x) - p) / density(x) from the normal quantile (the
    CDF is concave above 0, so the steps rise to the root without passing it).
    t_quantile(0.975, 4) = 2.776, (0.975, 8) = 2.306."""
    x = statistics.NormalDist().inv_cdf(p)
    log_scale = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(200):
        density = math.exp(log_scale - (df + 1) / 2 * math.log1p(x * x / df))
        step = (p - t_cdf(x, df)) / density
        x += step
        if abs(step) < 1e-12 * max(1.0, x):
            break
    return x


def t_cdf(x: float, df: int) -> float:
    """P(T <= x) for Student's t with whole df, exact (Abramowitz & Stegun 26.7.3-4): with
    theta = atan(x / sqrt(df)), c = cos^2 theta, the two-sided A = P(|T| < |x|) is
    df odd:  (2/pi) (theta + sin theta cos theta (1 + 2/3 c + 2.4/(3.5) c^2 + ... up to c^((df-3)/2))),
             df = 1: (2/pi) theta;
    df even: sin theta (1 + 1/2 c + 1.3/(2.4) c^2 + ... up to c^((df-2)/2));
    P(T <= x) = (1 + sign(x) A) / 2. Example: df = 2, x = 4.303: theta = atan(3.0426) = 1.2535,
    A = sin theta = 0.9500, P = 0.975."""
    theta = math.atan(abs(x) / math.sqrt(df))
    c = math.cos(theta) ** 2
    term, total = 1.0, 1.0
    if df % 2:
        for k in range(1, (df - 1) // 2):
            term *= c * (2 * k) / (2 * k + 1)
            total += term
        two_sided = 2 / math.pi * (theta + (math.sin(theta) * math.cos(theta) * total if df > 1 else 0.0))
    else:
        for k in range(1, df // 2):
            term *= c * (2 * k - 1) / (2 * k)
            total += term
        two_sided = math.sin(theta) * total
    return (1 + math.copysign(two_sided, x)) / 2


def at_zero(a: Sequence[float], b: Sequence[float], threshold: float = 0.05, confidence: float = 0.95) -> Verdict:
    """The ratio's verdict where a value is 0 (a diverged run's accuracy), which has no log: the
    difference rule's outcome (`difference`), its threshold the same share of the larger median (5% of
    0.80: 0.04), as a Verdict whose ratio is median(b) / median(a) (1 where both are 0, infinite where
    a's alone is) and whose interval is none (NaN). Example: a = 0.80, 0.81, 0.79 and b = 0, 0, 0:
    delta -0.80, beyond, direction -1, ratio 0."""
    xs, ys = _numbers("a", a, positive=False), _numbers("b", b, positive=False)
    ma, mb = statistics.median(xs), statistics.median(ys)
    d = difference(xs, ys, threshold * (max(ma, mb) or max(xs + ys) or 1.0), confidence)
    ratio = mb / ma if ma > 0 else (1.0 if mb == 0 else math.inf)
    return Verdict(ratio, math.nan, math.nan, d.outcome, d.direction, threshold, d.n_a, d.n_b, d.repeats_needed)
