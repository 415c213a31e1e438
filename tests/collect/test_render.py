"""collect.render: a Grid as Markdown, rich and LaTeX; numbers as text."""
from __future__ import annotations

import math

import pytest
from rich.console import Console

from collect.fit import print_grids, to_rich
from collect.render import Grid, accuracy, latex_escape, number, percent, seconds, to_latex, to_markdown

GRID = Grid("table1", "Table 1", "Units: s", ["setup", "b=32 time (s)"], [["1 GPU", "10.00"], ["2 GPUs, DDP", "OOM"]],
            ["speedup = T1 / TN"])


@pytest.mark.parametrize("value, digits, text", [
    (None, 2, "-"), (math.nan, 2, "-"), (1.6666, 2, "1.67"), (5000.4, 0, "5000"), (3, 1, "3.0"),
])
def test_number(value, digits, text):
    assert number(value, digits) == text


@pytest.mark.parametrize("value, text", [(12.345, "12.35"), (1.0, "1.00"), (0.5, "0.500"), (0.0123, "0.012"),
                                         (None, "-"), (math.nan, "-")])
def test_seconds_keep_three_decimals_below_one_second(value, text):
    assert seconds(value) == text


def test_percent():
    assert percent(0.25) == "25.0%" and percent(0.8333, 2) == "83.33%" and percent(math.nan) == "-"


def test_markdown_layout():
    lines = to_markdown(GRID).splitlines()
    assert lines[:4] == ["### Table 1", "", "_Units: s_", ""]
    assert lines[4:8] == ["| setup | b=32 time (s) |", "|---|---:|", "| 1 GPU | 10.00 |", "| 2 GPUs, DDP | OOM |"]
    assert lines[-1] == "- `speedup = T1 / TN`"


def test_markdown_escapes_pipes():
    grid = Grid("k", "T", "a|b", ["h"], [["x|y"]])
    assert "| x\\|y |" in to_markdown(grid) and "_a\\|b_" in to_markdown(grid)


def test_markdown_of_an_empty_grid_says_why():
    text = to_markdown(Grid("k", "T", "c", ["a"], [], empty="No timing runs in this study."))
    assert "**No timing runs in this study.**" in text and "| a |" not in text


def test_rich_table_has_every_row_and_column():
    table = to_rich(GRID)
    assert table.row_count == 2 and [str(c.header) for c in table.columns] == ["setup", "b=32 time (s)"]


def test_latex_escapes_and_structure():
    assert latex_escape("50% of b_32 & #1") == r"50\% of b\_32 \& \#1"
    text = to_latex(GRID)
    assert r"\label{tab:table1}" in text and r"\begin{tabular}{lr}" in text
    assert r"2 GPUs, DDP & OOM \\" in text
    assert r"50\% of\_it" in to_latex(Grid("k", "T", "50% of_it", ["a"], [["1"]]))  # the caption too


@pytest.mark.parametrize("markup", [False, True])
def test_brackets_in_a_grid_print_as_written_on_any_console(markup):
    grid = Grid("k", "T [x]", "caption [/b]", ["setup [n]"], [["1 GPU [pipeline=fast, precision=bf16]"]])
    console = Console(record=True, width=200, markup=markup)
    print_grids(console, [grid])
    shown = console.export_text()
    assert "1 GPU [pipeline=fast, precision=bf16]" in shown and "setup [n]" in shown and "\\[" not in shown


@pytest.mark.parametrize("value, count, text", [
    (0.84, 100, "84% of 100"),  # one image is a whole point
    (0.8437, 1_000, "84.4%"),  # 1,000 and up: no count beside it
    (0.84372, 10_000, "84.37%"),
    (0.5, 48, "50% of 48"),
    (0.84372, float("nan"), "84.37%"),  # a result before the count was recorded
])
def test_an_accuracy_shows_the_precision_its_test_count_allows(value, count, text):
    assert accuracy(value, count) == text
