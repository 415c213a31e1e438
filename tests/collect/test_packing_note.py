"""collect says when runs it sets against each other shared their machine differently (the local
executor packs cells side by side; jobs.core.beside records it): --compare's environment line, and
an answer's note where its cited runs mix packed and alone."""
from __future__ import annotations

from collect.report import collect
from jobs.core.beside import Beside
from tests.collect.dirs import SINGLE, hw5_results, repeats
from tests.factories import write_results
from tests.helpers import cli

ALONE, PACKED = Beside("0", 0, 0).to_env(), Beside("1", 2, 2).to_env()


def test_compare_says_when_one_set_ran_beside_other_cells(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    a_runs, b_runs = repeats(SINGLE, 10.0), repeats(SINGLE, 10.5)
    for run in a_runs:
        run.env.update(ALONE)
    for run in b_runs:
        run.env.update(PACKED)
    a, b = write_results(tmp_path / "a", a_runs), write_results(tmp_path / "b", b_runs)
    code, out, _ = cli(capsys, "collect", "--results", b, "--compare", a)
    assert code == 0
    assert "environments differ" in out and "runs: alone (A) vs beside other cells (B)" in out


def test_sets_that_recorded_no_neighbours_say_nothing_of_them(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    a, b = write_results(tmp_path / "a", repeats(SINGLE, 10.0)), write_results(tmp_path / "b", repeats(SINGLE, 10.0))
    code, out, _ = cli(capsys, "collect", "--results", b, "--compare", a)
    assert code == 0 and "runs:" not in out and "same environment" in out


def test_a_speedup_over_a_packed_and_an_alone_run_says_so(tmp_path):
    results = hw5_results(1)
    for run in results:
        run.env.update(ALONE if run.cell["gpus_per_node"] == 1 else PACKED)
    answers = {a.id: a for a in collect(write_results(tmp_path / "hw5", results, study="hw5")).answers}
    note = "ran beside other cells on their machine and the rest alone"
    assert note in answers["A.Q2"].text
    assert note not in answers["A.Q1"].text, "Q1's runs all ran alone"


def test_rows_that_ran_beside_other_cells_are_marked_and_q1_says_so(tmp_path):
    """TA5 5: run 12's 1-GPU runs (every speedup's T1) all ran beside other cells; no table said which rows and
    Q1 said nothing (its note was only for a mix of packed and alone)."""
    results = hw5_results(1)
    for run in results:
        run.env.update(PACKED if run.cell["gpus_per_node"] == 1 else ALONE)
    c = collect(write_results(tmp_path / "hw5", results, study="hw5"))
    q1 = next(a for a in c.answers if a.id == "A.Q1")
    assert "runs all ran beside other cells on their machine († in the tables)" in q1.text
    grids = {g.key: g for g in c.grids}
    assert all(row[0].endswith(" †") for row in grids["q1"].rows if row[1] != "OOM")
    one, *others = grids["table1"].rows
    assert one[0] == "1 GPU" and one[1].endswith(" †") and not any("†" in x for row in others for x in row)
    assert not any("†" in row[0] for row in grids["table2"].rows + grids["table3"].rows)  # the multi-GPU runs: alone
    assert any(x.startswith("† = a run of the row ran beside other cells") for x in grids["table1"].formulas)
