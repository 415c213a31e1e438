"""What a table shows of itself (collect/view.py): every row of a small study, as always; of a large
one, the rows with a result up to a readable number, the rows without one counted by status, and
where every row is (its CSV, which keeps them all)."""
from __future__ import annotations

import pandas as pd

from collect.report import collect
from collect.view import MAX_ROWS, shown
from tests.collect.dirs import write_mixed
from tests.factories import cell, train_result, write_results


def table(statuses: list[str], **columns) -> pd.DataFrame:
    return pd.DataFrame({"status": statuses, "n": range(len(statuses)), **columns})


def test_a_small_table_shows_every_row_and_says_nothing_more():
    small = table(["ok", "pending", "not submitted"] * 10)  # 30 rows: MAX_ROWS
    cut = shown(small, "x.csv")
    assert cut.table is small and cut.note == ""


def test_a_large_table_counts_the_rows_without_a_result_and_shows_the_first_with_one():
    large = table(["pending"] * 5 + ["ok", "failed"] * 20 + ["not submitted"] * 955)  # 1,000 rows, 40 with a result
    cut = shown(large, "x.csv", rows=30)
    assert list(cut.table.n) == list(range(5, 35))  # the first 30 with a result, in the table's order
    assert cut.note == ("30 of 1,000 configurations shown; 960 of 1,000 have no result yet: 5 pending, 955 not submitted; "
                        "10 more with a result. Every row is in x.csv.")


def test_a_table_of_no_result_at_all_says_so_in_place_of_its_rows():
    cut = shown(table(["not submitted"] * 100), "q1.csv", rows=30)
    assert cut.table.empty
    assert cut.note == "None of the 100 configurations has a result yet: 100 not submitted. Every row is in q1.csv."


def test_lines_of_several_rows_are_shown_whole():
    """Table 1's lines: a setup, its batches side by side; a setup with one batch done has a result."""
    rows = table(["ok", "pending"] * 40, setup=[i // 2 for i in range(80)])  # 40 setups of 2 rows
    cut = shown(rows, "table1.csv", rows=30, what="setups", by=["setup"])
    assert list(cut.table.setup.unique()) == list(range(30)) and len(cut.table) == 60  # both batches of each
    assert cut.note == "30 of 40 setups shown; 10 more with a result. Every row is in table1.csv."


def test_the_mixed_dir_lists_every_cell_as_before(tmp_path):
    """A small study is shown whole: every configuration of every table is a row of its grid, its
    status in words where it has no number (pending, not submitted), and no line of rows left out."""
    collected = collect(write_mixed(tmp_path / "mixed"))
    grids = {g.key: g for g in collected.grids}
    for key in ("q1", "strong", "table2", "table3", "test", "q4", "sweep"):
        assert len(grids[key].rows) == len(collected.tables[key]), key
    assert not any(g.more for g in collected.grids)
    statuses = {row[5] for row in grids["test"].rows}
    assert {"pending", "not submitted", "failed", "timeout", "OOM"} <= statuses


def test_a_large_study_shows_readable_tables_and_counts_the_rest(tmp_path):
    """A sweep of 60 learning rates and one other momentum, 5 of them run: every table shows the 5
    and counts the 56; the 5 are named by what varies over all 61 (the momentum too)."""
    lrs = [round(0.01 * (i + 1), 2) for i in range(60)]
    done = [train_result(cell("single", 128, lr=lr)) for lr in lrs[:5]]
    planned = [cell("single", 128, lr=lr) for lr in lrs[5:]] + [cell("single", 128, momentum=0.5)]
    collected = collect(write_results(tmp_path, done, planned=planned))
    grids = {g.key: g for g in collected.grids}
    assert len(collected.tables["test"]) == 61 and len(grids["test"].rows) == 5
    assert grids["test"].more == ("5 of 61 configurations shown; 56 of 61 have no result yet: 56 not submitted. "
                                  "Every row is in test.csv.")
    assert sorted(row[3] for row in grids["test"].rows) == ["0.01", "0.02", "0.03", "0.04", "0.05"]  # LR rule
    assert sorted(row[0] for row in grids["q1"].rows)[:2] == ["128 [lr=0.01, momentum=0.9]", "128 [lr=0.02, momentum=0.9]"]
    assert len((tmp_path / "test.csv").read_text().splitlines()) == 62  # the CSV: every row
    assert len(grids["sweep"].rows) == 5 and grids["sweep"].more.startswith("5 of 61 configurations shown")
    assert MAX_ROWS == 30
