"""collect.fit, the one rule that fits a table to the terminal: widths and folds worked by hand."""
from __future__ import annotations

from rich.console import Console

from collect.fit import fitted_widths, fold, least_widths, print_grids
from collect.render import Grid

# Table 1's shape: a setup column, then three columns for each of three batches.
HEADER = ["setup"] + [f"b={b} {what}" for b in (32, 128, 512) for what in ("time (s)", "speedup", "efficiency")]
ROWS = [["1 GPU"] + ["17.86", "1.00", "1.00"] * 3, ["2 nodes x 2 GPUs, DDP"] + ["6.18", "2.89", "0.72"] * 3]
WIDE = Grid("table1", "Table 1", "Units: seconds.", HEADER, ROWS, ["speedup = T1 / TN"])


def test_a_grid_that_fits_keeps_every_column_at_its_natural_width():
    """setup 21 (its longest name), then each header whole: 13, 12, 15, 14, 13, 16, 14, 13, 16;
    with the borders, 3 x 10 + 1 = 31: 178 in all."""
    assert fold(WIDE, 178) == [WIDE]
    assert fitted_widths(WIDE, 178) == [21, 13, 12, 15, 14, 13, 16, 14, 13, 16]


def test_the_narrowest_widths_are_a_header_word_a_whole_number_a_name_word():
    """setup: "nodes"/"GPUs,": 5 (its header 5); "b=128": 5; "efficiency": 10; "speedup": 7; "time": 4
    but "17.86" 5."""
    assert least_widths(WIDE) == [5, 5, 7, 10, 5, 7, 10, 5, 7, 10]


def test_a_wide_grid_folds_at_its_batches_repeating_the_setup():
    """At 80: setup 5 + 4, each batch's three columns 5 + 7 + 10 + 9 = 31: all nine (9 + 93 = 102)
    do not fit, two batches (9 + 62 = 71) do, two parts of whole batches are uneven in count only."""
    parts = fold(WIDE, 80)
    assert [p.header for p in parts] == [HEADER[:7], HEADER[:1] + HEADER[7:]]
    assert [p.title for p in parts] == ["Table 1 (1 of 2)", "Table 1 (2 of 2)"]
    assert [p.caption for p in parts] == ["", "Units: seconds."] and parts[0].formulas == []
    assert parts[1].rows[1] == ["2 nodes x 2 GPUs, DDP", "6.18", "2.89", "0.72"]


def test_every_printed_line_fits_and_every_number_and_header_word_is_whole():
    for width in (40, 60, 80, 100):
        console = Console(record=True, width=width)
        print_grids(console, [WIDE])
        text = console.export_text()
        assert max(map(len, text.splitlines())) <= width
        assert text.count("17.86") == 3 and text.count("efficiency") == 3, width
