"""collect says when runs it sets against each other shared their machine differently (the local
executor packs cells side by side; jobs.core.beside records it): --compare's environment line, and
an answer's note where its cited runs mix packed and alone."""
from __future__ import annotations

import json

from collect.report import collect, write_report
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


def _local(results):
    """The results dir as the local executor's: its registry records a `local` submission."""
    line = {"array": "n1-g1-t1", "cell_id": "0" * 12, "executor": "local", "job_id": None, "log_err": None,
            "log_out": None, "queue_pid": 1, "submitted_at": "2026-11-28T08:21:24+00:00", "time_min": None, "token": None}
    (results / "registry.jsonl").write_text(json.dumps(line) + "\n")
    return results


def test_a_set_whose_every_cell_ran_alone_on_several_gpus_says_so_and_how_it_was_submitted(tmp_path):
    """TA8 14: run 13 ran every cell alone on a 4-GPU machine (submit --exclusive); its hand-in said so nowhere (no
    dagger read as alone only by absence) and printed a submit without --exclusive, which would pack them."""
    results = hw5_results(1)
    for run in results:
        run.env.update(ALONE)
    c = collect(_local(write_results(tmp_path / "hw5", results, study="hw5")))
    write_report(c)
    said = f"All {len(results)} cells ran alone on their machine (4 GPUs): no timing ran beside another cell (submit --exclusive)"
    answers, report = (c.results_dir / "answers.md").read_text(), (c.results_dir / "report.md").read_text()
    assert answers.count(said) == 1 and report.count(said) == 1
    for text in (answers, report):
        assert f"submit --results {c.results_dir} --executor local --exclusive\n" in text
        assert "run by the local executor (no SLURM), one cell at a time (--exclusive)" in text


def test_a_set_with_a_packed_cell_or_one_gpu_or_no_record_prints_no_exclusive(tmp_path):
    """Where one cell ran beside another, the machine had one GPU, or the runs recorded nothing (SLURM's), the set
    is not said to have run alone and its submit takes no --exclusive."""
    packed = hw5_results(1)
    for i, run in enumerate(packed):
        run.env.update(PACKED if i == 0 else ALONE)
    one_gpu = [run for run in hw5_results(1) if run.cell["gpus_per_node"] == 1]
    for run in one_gpu:
        run.env.update(ALONE)
    for name, results in (("packed", packed), ("one-gpu", one_gpu), ("unrecorded", hw5_results(1))):
        c = collect(_local(write_results(tmp_path / name, results, study="hw5")))
        text = (c.results_dir / "answers.md").read_text()
        assert "cells ran alone on their machine (" not in text and "--executor local --exclusive" not in text, name
        assert f"submit --results {c.results_dir} --executor local\n" in text, name
