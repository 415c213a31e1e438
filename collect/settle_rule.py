"""How many runs per side settle an inconclusive comparison: a two-stage design (Stein 1945), final
after its second stage. Pure arithmetic on the values measured, no random draws.

Stage 1 is what is measured. A side with fewer than PILOT ok runs shows too little spread to size
from (one run shows none): the first round only brings both sides up to PILOT runs, still stage 1.
Stage 2 sizes each side from stage 1, on the verdict's scale (collect.verdict: a ratio's log
values, or a difference's own values, the threshold t in their unit):

    x_i, y_i       ratio: ln a_i, ln b_i          difference: a_i, b_i
    c, band        ratio: ln(ratio), ln(1 + t)    difference: median(b) - median(a), t
    s_a^2, s_b^2   the sample variances of the x and y of stage 1, df1 their Welch df
    d              = max(band / 2, |c| - band)   the half width stage 2 aims at
    n              = the least n per side with  q(df1) * sqrt(pi/2) * sqrt((s_a^2 + s_b^2) / n) <= d

q(df1) is the t quantile at (1 + confidence) / 2 with stage 1's df, not the final one's: Stein's
price for a spread estimated from few runs, so that the final half width reaches d however lucky
stage 1's spread was. d = band / 2 settles either way (an interval that narrow lies inside the
band or clear of 1 unless the ratio sits within d of the threshold); a ratio already past the
threshold by more than that needs only to stay past it, so d widens to |c| - band (a 10% shift
at 3% noise from 3 first runs: 52 runs on average, not 98). The final verdict is collect.verdict
over every run of both stages; there is no third round (`final`).

Why two stages and not a confidence sequence: every word of an answer comes from collect.verdict, a
fixed-size interval; a confidence sequence would need a second rule for the same words. Two looks
at that one rule keep the error rate bounded without it:

    false "beyond" (equal medians): the first look's rate (the interval excludes 1 at most
    1 - confidence of the time, and "beyond" needs the ratio past the threshold too) plus the
    second look's. Where stage 1 lies within the band (as equal medians mostly do), the second
    look's half width is about band / 2: a "beyond" there needs the ratio measured to stray by
    the whole band, about 2 q standard errors (P(|Z| > 3.9) < 0.01% at 95%). Where stage 1 lay
    past the band by chance, d is wider and the second look may err as often as a fixed-size
    one (1 - confidence); the simulation measures the sum: 0.1-1% at 3% noise, at most 4.3% at
    10% noise, from 3 to 10 first runs.
    settled: where the true ratio lies beyond the threshold by d or more, or within d of 1, the
    final verdict says "beyond" or "equivalent" about 95 times in 100. A true ratio within d of
    the threshold itself may stay inconclusive: no number of runs fixed in advance settles it
    reliably either, and "inconclusive: the second stage is spent" is the honest end.

tests/collect/test_settle_rule.py simulates it (3-10 first runs, 3% noise, a 10% shift) against
a fixed-size design of the same power, and on the difference scale (a 3-point shift, 1-point noise).
"""
from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from collect.verdict import MEDIAN_SE, MOST_REPEATS, t_quantile, variance, welch_df

PILOT = 3  # runs per side before a spread is worth sizing from
STAGE_TWO = 1000  # second-stage runs take repeat numbers from here (a study's own stop below: study.MAX_REPEATS)
DEFAULT_MAX_REPEATS = 20  # runs per side in all that `submit --settle` goes up to unless told (--max-repeats)


def pilot_size(n_a: int, n_b: int) -> int:
    """The runs per side the first round brings an under-measured comparison to: PILOT, or the
    larger side's count where that is more (both sides alike)."""
    return max(PILOT, n_a, n_b)


def stage_two_size(a: Sequence[float], b: Sequence[float], threshold: float = 0.05, confidence: float = 0.95,
                   ratio: bool = True) -> int:
    """Stage 2's runs per side in all (module docstring), from stage 1's values (each side at
    least 2), on the ratio's scale (values > 0, t a fraction) or, ratio False, the difference's (any
    values, t in their unit); never fewer than either side has. Capped at collect.verdict.MOST_REPEATS.
    Example: both sides' log values with variance 0.03^2 at 3 runs (df 4, q 2.776), equal
    medians, t = 5% (d = 0.0244): n >= (2.776 * 1.2533 * 0.03 / 0.0244)^2 * 2 = 36.6 -> 37.
    Difference: a = 50, 51, 52 and b = 53, 54, 55 points (variance 1 a side, df 4), t = 2 points:
    c = 3, d = max(1, 3 - 2) = 1, n >= (2.776 * 1.2533 * 1 / 1)^2 * 2 = 24.2 -> 25."""
    if min(len(a), len(b)) < 2:
        raise ValueError("stage 2 is sized from stage 1's spread: each side needs 2 runs or more")
    xs, ys = ([math.log(v) for v in a], [math.log(v) for v in b]) if ratio else (list(a), list(b))
    var_a, var_b = variance(xs), variance(ys)
    q = t_quantile((1 + confidence) / 2, welch_df(var_a, len(xs), var_b, len(ys)))
    ma, mb = statistics.median(a), statistics.median(b)
    c, band = (math.log(mb / ma), math.log1p(threshold)) if ratio else (mb - ma, threshold)
    d = max(band / 2, abs(c) - band)
    n = math.ceil((q * MEDIAN_SE / d) ** 2 * (var_a + var_b) - 1e-9)
    return min(max(n, len(xs), len(ys)), MOST_REPEATS)
