"""collect.findings, the kind-agnostic part: when two figures are distinguishable (worked by hand
on both sides of the rule), the words that follow, how a figure over repeats is shown, and a
finding as JSON."""
from __future__ import annotations

import json
import math
from collections import namedtuple

import pytest

from collect.findings import Evidence, Finding, Measured, compare, listing, one_run, shown, word


def m(value: float, low: float | None = None, high: float | None = None, repeats: int = 3, runs: int = 0) -> Measured:
    return Measured(value, value if low is None else low, value if high is None else high, repeats, runs)


@pytest.mark.parametrize("a, b, expected", [
    (m(10, 9, 12), m(11, 10.5, 11.5), 0),  # |1| <= spread 3 of a
    (m(11, 10.5, 11.5), m(10, 9, 12), 0),  # the same pair the other way round: either side's spread counts
    (m(10, 9.9, 10.1), m(11, 10.9, 11.1), -1),  # |1| > 0.2
    (m(11, 10.9, 11.1), m(10, 9.9, 10.1), 1),
    (m(10, 9.5, 10.5), m(11, 10.9, 11.1), 0),  # |1| <= 1.0: on the border, not distinguishable
    (m(10, repeats=1), m(10.01, repeats=1), -1),  # one run each: any difference counts (and the sentence says so)
    (m(10, repeats=1), m(10, repeats=1), 0),
])
def test_compare_is_not_distinguishable_within_the_spread_of_either_side(a, b, expected):
    assert compare(a, b) == expected


def test_word_follows_the_comparison():
    assert [word(compare(a, b), "faster", "slower") for a, b in
            [(m(1, repeats=1), m(2, repeats=1)), (m(2, repeats=1), m(1, repeats=1)), (m(1, 0, 3), m(2, 1.5, 2.5))]] \
        == ["faster", "slower", "not distinguishable from"]


def test_one_run_says_which_figures_have_no_spread():
    assert one_run(m(1), m(2)) == ""
    assert one_run(m(1, repeats=1)) == ", one run: no spread measured"
    assert one_run(m(1, repeats=1), m(2, repeats=1)) == ", one run each: no spread measured"
    assert one_run(m(1, repeats=1), m(2)) == ", some from one run: no spread measured there"


def test_shown_gives_the_range_where_there_are_repeats():
    two = lambda v: f"{v:.2f}"  # noqa: E731
    assert shown(m(4.17, repeats=1), two, " s") == "4.17 s"
    assert shown(m(4.17, 4.16, 4.88), two, " s") == "4.17 s (4.16-4.88 s over 3 runs)"
    assert shown(m(4.17, 4.16, 4.88, runs=4), two, " s") == "4.17 s (4.16-4.88 s over 3 of 4 runs)"
    assert shown(m(1.0, 1.0, 1.0), two) == "1.00 (all 3 runs)"
    assert shown(m(4.0, repeats=1, runs=3), two) == "4.00 (1 of 3 runs)"


def test_measured_rates_from_times_swap_min_and_max():
    rate = m(2.0, 1.6, 2.5).inverse(50_000)  # 50,000 images in 2.0 s (1.6-2.5)
    assert (rate.value, rate.low, rate.high) == (25_000, 20_000, 31_250)


def test_listing_names_five_then_counts():
    assert listing([]) == "" and listing(["a"]) == "a" and listing(["a", "b", "c"]) == "a, b and c"
    assert listing(list("abcdefg")) == "a, b, c, d, e and 2 more"


def test_a_finding_is_json_with_null_for_a_missing_number():
    finding = Finding("A.Q1", "text.", {"x_s": 1.5, "y_s": math.nan}, (Evidence("q1", 2, "1 GPU, batch 512 per GPU"),))
    data = json.loads(json.dumps(finding.to_dict(), allow_nan=False))
    assert data == {"question": "A.Q1", "text": "text.", "numbers": {"x_s": 1.5, "y_s": None},
                    "evidence": [{"table": "q1", "row": 2, "label": "1 GPU, batch 512 per GPU"}]}
    assert finding.evidence_text() == "q1 row 2 (1 GPU, batch 512 per GPU)"


def test_a_row_without_its_spread_counts_as_one_run():
    Row = namedtuple("Row", "epoch_s epoch_s_min epoch_s_max loss repeats runs")
    row = Row(4.0, 3.0, 5.0, 0.5, 3, 3)
    assert Measured.of(row, "epoch_s") == Measured(4.0, 3.0, 5.0, 3, 3)
    assert Measured.of(row, "loss").repeats == 1 and one_run(Measured.of(row, "loss")) == ", one run: no spread measured"
