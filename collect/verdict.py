"""The one verdict rule: two groups of repeats (a and b) of one figure, their ratio with an
interval, and one of three verdicts. Used by the findings, the answers and `collect --compare`.

The method, for positive values (seconds, images/s, GB/s, accuracy):

    ratio   r = median(b) / median(a)
    log values  x = ln a_i, y = ln b_i; their sample variances s_a^2, s_b^2 (n - 1 in the divisor)
    se      = sqrt(pi/2) * sqrt(s_a^2 / n_a + s_b^2 / n_b)     (Welch; sqrt(pi/2): a median's
              standard error over a mean's, for normal values, so the interval holds for medians)
    df      = (s_a^2/n_a + s_b^2/n_b)^2 / ((s_a^2/n_a)^2/(n_a-1) + (s_b^2/n_b)^2/(n_b-1)), rounded down
    interval (low, high) = r * exp(-+ q * se), q = the t quantile at (1 + confidence) / 2 with df

A Welch t-interval on the log values, centred on the ratio of medians (robust to one slow repeat)
and widened to a median's standard error.
It is exact arithmetic, no random draws: the same inputs always give the same verdict.

The verdict, with the practical threshold t (0.05 = 5%) and its band (1/(1+t), 1+t):
    beyond      the interval excludes 1 (a difference is measured) and r lies outside the band
                (it is larger than the threshold); direction +1 when b is above a, -1 below;
    equivalent  the interval lies inside the band: any difference is smaller than t;
    inconclusive otherwise, with roughly how many repeats per side would settle it.

Why "r outside the band" and not "the whole interval outside it": at n = 5 per side with 3% noise
a 10% change would be found only about a third of the time by the stricter rule; this one finds
it about 9 times in 10 while a same-distribution pair is called "beyond" under 5% of the time (tests/collect
/test_verdict.py simulates both). The interval is always shown beside the verdict, so a "beyond"
whose interval reaches into the band says so.

One run on either side: no spread is measured, always inconclusive (`one_run`).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

BEYOND, EQUIVALENT, INCONCLUSIVE = "beyond", "equivalent", "inconclusive"
MEDIAN_SE = math.sqrt(math.pi / 2)  # a median's standard error over a mean's, for normal values
MOST_REPEATS = 1000  # repeats_needed is capped here: a difference this close to the threshold is never settled


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

    @property
    def one_run(self) -> bool:
        """A side with a single run: no spread measured, so always inconclusive."""
        return min(self.n_a, self.n_b) < 2

    @property
    def percent(self) -> float:
        """The change of b against a in percent: 100 (r - 1). 1.10 -> 10.0, 0.90 -> -10.0."""
        return 100.0 * (self.ratio - 1.0)


def verdict(a: Sequence[float], b: Sequence[float], threshold: float = 0.05, confidence: float = 0.95) -> Verdict:
    """The verdict on b against a (module docstring: the formula and the rule). ValueError when a
    side is empty, holds a NaN, infinite or non-positive value, or the threshold or confidence is
    out of range."""
    values_a, values_b = _positive("a", a), _positive("b", b)
    xs, ys = [math.log(v) for v in values_a], [math.log(v) for v in values_b]
    if not threshold > 0 or math.isinf(threshold):
        raise ValueError(f"threshold must be a positive fraction (0.05 = 5%), not {threshold}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be between 0 and 1 (0.95 = 95%), not {confidence}")
    ratio = statistics.median(values_b) / statistics.median(values_a)
    band = math.log1p(threshold)
    if min(len(xs), len(ys)) < 2:
        return Verdict(ratio, math.nan, math.nan, INCONCLUSIVE, 0, threshold, len(xs), len(ys), None)
    var_a, var_b = variance(xs), variance(ys)
    se = MEDIAN_SE * math.sqrt(var_a / len(xs) + var_b / len(ys))
    half = t_quantile((1 + confidence) / 2, welch_df(var_a, len(xs), var_b, len(ys))) * se
    centre = math.log(ratio)
    low, high = centre - half, centre + half
    if (low > 0 or high < 0) and abs(centre) > band:
        outcome, direction, needed = BEYOND, (1 if centre > 0 else -1), None
    elif -band < low and high < band:
        outcome, direction, needed = EQUIVALENT, 0, None
    else:
        needed = repeats_needed(centre, var_a, var_b, band, confidence, min(len(xs), len(ys)) + 1)
        outcome, direction = INCONCLUSIVE, 0
    return Verdict(ratio, math.exp(low), math.exp(high), outcome, direction, threshold, len(xs), len(ys), needed)


def _positive(side: str, values: Sequence[float]) -> list[float]:
    """A side's values as floats; ValueError naming the side when one cannot be used."""
    if len(values) == 0:
        raise ValueError(f"side {side} has no values: a verdict needs at least one run on each side")
    numbers = []
    for value in values:
        try:
            number = float(value)
        except (TypeError, ValueError):
            number = math.nan
        if not (math.isfinite(number) and number > 0):
            raise ValueError(f"side {side} holds {value!r}: every value must be a finite number above 0")
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


def repeats_needed(centre: float, var_a: float, var_b: float, band: float, confidence: float, at_least: int = 2) -> int:
    """Roughly how many repeats per side would settle an inconclusive verdict if the log ratio
    (centre) and the log values' variances stayed as measured: the least n >= at_least whose
    interval, n runs a side, has a half width
        q(welch_df(var_a, n, var_b, n)) * sqrt(pi/2) * sqrt((var_a + var_b) / n)
    below the margin: |centre| (to exclude 1) when the ratio is beyond the band, else
    band - |centre| (to fit inside it). Capped at MOST_REPEATS. Example: centre 0.02, both
    variances 0.03^2, band ln 1.05 = 0.0488, margin 0.0288: n = 15 (df 28) gives 2.048 * 1.2533 *
    0.03 * sqrt(2/15) = 0.0281 < 0.0288, n = 14 gives 0.0292 -> 15."""
    margin = abs(centre) if abs(centre) > band else band - abs(centre)
    if var_a + var_b == 0:
        return at_least
    p = (1 + confidence) / 2

    def settles(n: int) -> bool:  # the half width falls as n grows (df grows, 1/n falls)
        return t_quantile(p, welch_df(var_a, n, var_b, n)) * MEDIAN_SE * math.sqrt((var_a + var_b) / n) < margin

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


def at_zero(a: Sequence[float], b: Sequence[float], threshold: float = 0.05) -> Verdict:
    """The verdict where a side holds a 0 (a diverged run's accuracy), which has no log and so no
    ratio's interval (low, high: NaN). Every run of one side at 0 and every run of the other above it:
    beyond, the change being total (ratio 0, or infinite when b is the side above); both at 0:
    equivalent (ratio 1); a side mixing 0 and values above it: inconclusive (its spread has no
    log). One run a side stays inconclusive, as by the rule (its ratio says which way it went)."""
    xs, ys = [float(v) for v in a], [float(v) for v in b]
    if not xs or not ys or min(xs + ys) < 0 or 0 not in xs + ys:
        raise ValueError("at_zero compares values >= 0 of which one is 0, at least one a side")
    ma, mb = statistics.median(xs), statistics.median(ys)
    ratio = 1.0 if ma == mb == 0 else (mb / ma if ma > 0 else math.inf)
    outcome, direction = INCONCLUSIVE, 0
    if min(len(xs), len(ys)) >= 2:
        if max(xs) == max(ys) == 0:
            outcome = EQUIVALENT
        elif (max(xs) == 0 and min(ys) > 0) or (max(ys) == 0 and min(xs) > 0):
            outcome, direction = BEYOND, (1 if mb > ma else -1)
    return Verdict(ratio, math.nan, math.nan, outcome, direction, threshold, len(xs), len(ys), None)
