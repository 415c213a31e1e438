"""The benchmarks' summaries compare by the one rule (collect.verdict): the faithful loop against
the plain one passes its target only where the verdict says it is not slower beyond 2%."""
from __future__ import annotations

from benchmarks.summarize import target
from collect.verdict import verdict

PLAIN = [10.0, 10.1, 9.9]


def test_a_faithful_side_slower_beyond_the_threshold_misses():
    assert target([verdict(PLAIN, [11.0, 11.1, 10.9], threshold=0.02)]) == "MISS"  # 10% slower, 1% spread


def test_within_the_threshold_or_faster_passes():
    tight = [10.0, 10.01, 9.99]  # 0.1% spread: the interval fits inside 2%
    assert target([verdict(tight, tight, threshold=0.02)]) == "PASS"
    assert target([verdict(PLAIN, [9.0, 9.1, 8.9], threshold=0.02)]) == "PASS"


def test_one_run_a_side_or_a_wide_interval_is_unsettled_not_a_pass():
    # the old rule passed a single faithful run 1% slower (1.01 <= 1.02); one run a side measures no spread
    assert target([verdict([10.0], [10.1], threshold=0.02)]) == "UNSETTLED"
    assert target([verdict(PLAIN, [10.0, 10.1, 9.9], threshold=0.02),
                   verdict([10.0, 12.0, 8.0], [10.0, 12.0, 8.0], threshold=0.02)]) == "UNSETTLED"
