"""collect.evidence: how a figure over repeats is shown, rates from times, lists that stay short,
and a table row read as a figure."""
from __future__ import annotations

from collections import namedtuple

from collect.evidence import Evidence, Measured, listing, shown


def m(value: float, low: float | None = None, high: float | None = None, repeats: int = 3, runs: int = 0) -> Measured:
    return Measured(value, value if low is None else low, value if high is None else high, repeats, runs)


def test_shown_gives_the_range_where_there_are_repeats():
    two = lambda v: f"{v:.2f}"  # noqa: E731
    assert shown(m(4.17, repeats=1), two, " s") == "4.17 s"
    assert shown(m(4.17, 4.16, 4.88), two, " s") == "4.17 s (4.16-4.88 s over 3 runs)"
    assert shown(m(4.17, 4.16, 4.88, runs=4), two, " s") == "4.17 s (4.16-4.88 s over 3 of 4 runs)"
    assert shown(m(1.0, 1.0, 1.0), two) == "1.00 (all 3 runs)"
    assert shown(m(4.0, repeats=1, runs=3), two) == "4.00 (1 run; 2 more planned, no result)"


def test_measured_rates_from_times_swap_min_and_max():
    rate = m(2.0, 1.6, 2.5).inverse(50_000)  # 50,000 images in 2.0 s (1.6-2.5)
    assert (rate.value, rate.low, rate.high) == (25_000, 20_000, 31_250)


def test_listing_names_five_then_counts():
    assert listing([]) == "" and listing(["a"]) == "a" and listing(["a", "b", "c"]) == "a, b and c"
    assert listing(list("abcdefg")) == "a, b, c, d, e and 2 more"


def test_evidence_names_its_table_and_row():
    e = Evidence("q1", 2, "1 GPU, batch 512 per GPU")
    assert e.to_dict() == {"table": "q1", "row": 2, "label": "1 GPU, batch 512 per GPU"}
    assert e.text() == "q1 row 2 (1 GPU, batch 512 per GPU)"


def test_a_row_without_its_spread_counts_as_one_run():
    Row = namedtuple("Row", "epoch_s epoch_s_min epoch_s_max loss repeats runs")
    row = Row(4.0, 3.0, 5.0, 0.5, 3, 3)
    assert Measured.of(row, "epoch_s") == Measured(4.0, 3.0, 5.0, 3, 3)
    assert Measured.of(row, "loss").repeats == 1
