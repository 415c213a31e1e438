"""`python -m orchestrator collect` over a results dir: what the user sees (the tables printed, the
JSON's rows, where the files went) and gets (the tables and the report, in the results dir or
--out), and one error line with exit 2 for a corrupt or damaged file."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.helpers import cli, cli_json, unwritable

TABLES = ("q1", "table1", "strong", "table2", "table3", "test", "q4", "overhead", "sweep", "spent")  # sweep: Q4's remedies
# spent.json: what the dir's jobs held, as collect measured it (one squeue, at most one sacct)
TABLE_FILES = ("tables.md", "tables.tex", "answers.md", *(f"{name}.csv" for name in TABLES), "spent.json")
DDP_ROW = "| 2 GPUs, DDP | 25.00 | 1.60 | 0.80 | 20% | failed |  |  |  |"  # Table 1: b=32 ran, b=128 failed


def test_collect_json_has_every_table_and_names_the_files_it_wrote(mixed_dir, capsys):
    out = cli_json(capsys, "collect", "--results", mixed_dir)
    assert set(out) == {*TABLES, "answers", "written"}
    row = next(r for r in out["table1"] if r["engine"] == "ddp" and r["gpus"] == 2 and r["batch_per_gpu"] == 32)
    assert (row["nodes"], row["status"], row["epoch_s"], row["speedup"]) == (1, "ok", 25.0, 1.6)
    failed = next(r for r in out["table1"] if r["engine"] == "ddp" and r["gpus"] == 2 and r["batch_per_gpu"] == 128)
    assert failed["status"] == "failed" and failed["epoch_s"] is None and "NCCL error" in failed["error"]
    assert [(r["batch_per_gpu"], r["status"]) for r in out["q1"]] == [(32, "ok"), (128, "ok"), (512, "oom"), (8192, "pending")]
    written = [str(Path(p).relative_to(mixed_dir)) for p in out["written"]]
    assert written[:len(TABLE_FILES)] == list(TABLE_FILES)
    # then the hand-in's cells and commands (TA3 6), and the plots answers.md links (TA3 29)
    assert all(name.startswith(("cells/", "plots/")) for name in written[len(TABLE_FILES):])
    assert "cells/run_all.sh" in written and "plots/table1_speedup.png" in written
    assert DDP_ROW in (mixed_dir / "tables.md").read_text()


def test_collect_prints_the_tables_and_writes_them_and_the_report(mixed_dir, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")  # every table's columns whole
    code, out, err = cli(capsys, "collect", "--results", mixed_dir, "--report", "--tables")
    assert code == 0 and err == ""
    for title in ("Q1: one epoch on 1 GPU by batch size", "Table 1: time and speedup of one epoch",
                  "Table 2: compute and communication per epoch", "Table 3: communication bandwidth utilization",
                  "Q4: training loss and accuracy of epoch 5"):
        assert title in out
    assert re.search(r"│ 2 GPUs, DDP +│ +25\.00 │ +1\.60 │ +0\.80 │ +20% │", out), "Table 1's DDP row"
    assert re.search(r"│ 128 +│ 17\.00 \(16\.00-25\.00\) \* │ 22\.00 \(20\.00-30\.00\) \* │", out), "Q1's repeats"
    assert f"report: {mixed_dir / 'report.html'} (self-contained)" in out
    assert DDP_ROW in (mixed_dir / "tables.md").read_text()
    html = (mixed_dir / "report.html").read_text()
    assert "Table 3: communication bandwidth utilization" in html and '<td class="num status">failed</td>' in html
    assert (mixed_dir / "plots/table1_speedup.png").read_bytes().startswith(b"\x89PNG")


def test_a_corrupt_result_file_is_an_error_naming_it(tmp_path, capsys):
    (tmp_path / "0123456789ab.json").write_text("{ not json")
    code, out, err = cli(capsys, "collect", "--results", tmp_path)
    assert code == 2 and err.startswith("error: result file") and "0123456789ab.json" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["0123456789ab.json"], "no table from a dir it cannot read"


def test_no_results_dir_is_an_error(tmp_path, capsys):
    code, _, err = cli(capsys, "collect", "--results", tmp_path / "nope")
    assert code == 2 and "no results dir" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "nope").exists()


DEEP = "[" * 100_000 + "]" * 100_000


def test_env_null_or_a_copied_result_is_an_error_naming_the_file(mixed_dir, capsys):
    first, second = sorted(p for p in mixed_dir.glob("*.json") if p.name != "plan.json")[:2]
    data = json.loads(first.read_text())
    first.write_text(json.dumps({**data, "env": None}))
    code, _, err = cli(capsys, "collect", "--results", mixed_dir)
    assert code == 2 and err.startswith(f"error: result file {first}") and "env must be an object" in err
    first.write_text(json.dumps(data))
    second.write_text(first.read_text())  # a copy over another cell's file
    code, _, err = cli(capsys, "collect", "--results", mixed_dir)
    assert code == 2 and f"holds the result of cell {first.stem}" in err


@pytest.mark.parametrize("text", [DEEP, "[1, 2]", '{"cells": 5}'])
def test_a_damaged_plan_is_an_error_naming_it_not_a_traceback(mixed_dir, capsys, text):
    (mixed_dir / "plan.json").write_text(text)
    code, _, err = cli(capsys, "collect", "--results", mixed_dir)
    assert code == 2 and err.startswith("error: ") and "plan.json" in err and len(err.strip().splitlines()) == 1, err


def test_a_deeply_nested_registry_line_is_skipped_like_any_corrupt_line(mixed_dir, capsys):
    """The tables are the dir's as before: the cells the registry's other lines submitted still pending."""
    with open(mixed_dir / "registry.jsonl", "a") as f:
        f.write(DEEP + "\n")
    out = cli_json(capsys, "collect", "--results", mixed_dir)
    assert [(r["batch_per_gpu"], r["status"]) for r in out["q1"]] == [(32, "ok"), (128, "ok"), (512, "oom"), (8192, "pending")]
    assert [(r["engine"], r["gpus"], r["batch_per_gpu"], r["status"]) for r in out["table1"]] == [
        ("single", 1, 32, "ok"), ("single", 1, 128, "ok"), ("dp", 2, 32, "ok"), ("dp", 2, 128, "pending"),
        ("ddp", 2, 32, "ok"), ("ddp", 2, 128, "failed"), ("dp", 4, 32, "timeout"), ("ddp", 4, 32, "ok"),
        ("ddp", 4, 128, "not submitted")]


def test_a_read_only_results_dir_still_prints_the_tables_and_says_what_was_not_written(mixed_dir, capsys):
    before = sorted(p.name for p in mixed_dir.iterdir())
    with unwritable(mixed_dir):
        code, out, err = cli(capsys, "collect", "--results", mixed_dir, "--report", "--tables")
    assert "Table 2: compute and communication" in out  # the tables, all the same
    assert code == 2 and err.startswith(f"error: cannot write {mixed_dir}/") and "--out DIR" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in mixed_dir.iterdir()) == before


def test_out_writes_the_tables_and_the_report_elsewhere(mixed_dir, tmp_path, capsys):
    out = tmp_path / "hand-in"
    before = sorted(p.name for p in mixed_dir.iterdir())
    with unwritable(mixed_dir):
        code, printed, err = cli(capsys, "collect", "--results", mixed_dir, "--out", out, "--report", "--json")
    assert code == 0, err
    written = [str(Path(p).relative_to(out)) for p in json.loads(printed)["written"]]  # all of it under --out
    assert written[:len(TABLE_FILES)] == list(TABLE_FILES) and written[-2:] == ["report.html", "report.md"]
    plots = [name for name in written if name.startswith("plots/")]
    assert len(plots) == 5 and all(name.startswith(("cells/", "plots/")) for name in written[len(TABLE_FILES):-2])
    assert DDP_ROW in (out / "tables.md").read_text()
    assert "Table 1: time and speedup" in (out / "report.html").read_text()
    assert (out / "table1.csv").read_text().splitlines()[5].startswith("ddp,32,1,2,")  # the DDP 2-GPU b=32 row
    assert (out / "plots/table1_speedup.png").read_bytes().startswith(b"\x89PNG")
    assert sorted(p.name for p in mixed_dir.iterdir()) == before


def test_another_studys_plan_is_refused_as_status_refuses_it(mixed_dir, capsys):
    before = sorted(p.name for p in mixed_dir.iterdir())
    study = json.loads((mixed_dir / "plan.json").read_text())["study"]
    for verb in ("status", "collect"):
        code, _, err = cli(capsys, verb, "--study", "hw5", "--results", mixed_dir)
        assert code == 2 and f"holds a plan of study {study!r}, not 'hw5'" in err, (verb, err)
        assert len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in mixed_dir.iterdir()) == before, "no table written from another study's dir"
    assert cli(capsys, "collect", "--study", study, "--results", mixed_dir)[0] == 0


def test_many_junk_result_files_are_named_in_one_error(tmp_path, capsys):
    names = [f"{i:012x}.json" for i in range(1, 9)]
    for name in names:
        (tmp_path / name).write_text("{ junk")
    code, _, err = cli(capsys, "collect", "--results", tmp_path)
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("error: 8 result files cannot be read") and "move it aside" in err
    assert str(tmp_path / names[0]) in err and all(name in err for name in names[:5]) and "and 3 more" in err
