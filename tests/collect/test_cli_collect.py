"""`python -m orchestrator collect` over a results dir: JSON keys, the report files, and exit 2
for a corrupt result file."""
from __future__ import annotations

import json

import pytest

from orchestrator.cli import main
from tests.helpers import unwritable


def test_collect_json_has_every_table(mixed_dir, capsys):
    assert main(["collect", "--results", str(mixed_dir), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"q1", "table1", "strong", "table2", "table3", "q4", "written"}
    row = next(r for r in out["table1"] if r["engine"] == "ddp" and r["gpus"] == 2 and r["batch_per_gpu"] == 32)
    assert (row["nodes"], row["status"], row["epoch_s"], row["speedup"]) == (1, "ok", 25.0, 1.6)
    failed = next(r for r in out["table1"] if r["engine"] == "ddp" and r["gpus"] == 2 and r["batch_per_gpu"] == 128)
    assert failed["status"] == "failed" and failed["epoch_s"] is None and "NCCL error" in failed["error"]


def test_collect_prints_tables_and_writes_the_report(mixed_dir, capsys):
    assert main(["collect", "--results", str(mixed_dir), "--report"]) == 0
    out = capsys.readouterr().out
    assert "Table 2: compute and communication" in out and "report:" in out
    for name in ("report.html", "report.md", "tables.md", "tables.tex", "table3.csv", "plots/table1_speedup.png"):
        assert (mixed_dir / name).is_file(), name


def test_a_corrupt_result_file_is_an_error_naming_it(tmp_path, capsys):
    (tmp_path / "0123456789ab.json").write_text("{ not json")
    assert main(["collect", "--results", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: result file") and "0123456789ab.json" in err


def test_no_results_dir_is_an_error(tmp_path, capsys):
    assert main(["collect", "--results", str(tmp_path / "nope")]) == 2
    assert "no results dir" in capsys.readouterr().err


DEEP = "[" * 100_000 + "]" * 100_000


def test_env_null_or_a_copied_result_is_an_error_naming_the_file(mixed_dir, capsys):
    results = mixed_dir
    first, second = sorted(p for p in results.glob("*.json") if p.name != "plan.json")[:2]
    data = json.loads(first.read_text())
    first.write_text(json.dumps({**data, "env": None}))
    assert main(["collect", "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: result file {first}") and "env must be an object" in err
    first.write_text(json.dumps(data))
    second.write_text(first.read_text())  # a copy over another cell's file
    assert main(["collect", "--results", str(results)]) == 2
    assert f"holds the result of cell {first.stem}" in capsys.readouterr().err


@pytest.mark.parametrize("text", [DEEP, "[1, 2]", '{"cells": 5}'])
def test_a_damaged_plan_is_an_error_naming_it_not_a_traceback(mixed_dir, capsys, text):
    results = mixed_dir
    (results / "plan.json").write_text(text)
    assert main(["collect", "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "plan.json" in err and len(err.strip().splitlines()) == 1, err


def test_a_deeply_nested_registry_line_is_skipped_like_any_corrupt_line(mixed_dir, capsys):
    results = mixed_dir
    with open(results / "registry.jsonl", "a") as f:
        f.write(DEEP + "\n")
    assert main(["collect", "--results", str(results), "--json"]) == 0


def test_a_read_only_results_dir_still_prints_the_tables_and_says_what_was_not_written(mixed_dir, capsys):
    results = mixed_dir
    before = sorted(p.name for p in results.iterdir())
    with unwritable(results):
        code = main(["collect", "--results", str(results), "--report"])
    out, err = capsys.readouterr()
    assert "Table 2: compute and communication" in out  # the tables, all the same
    assert code == 2 and err.startswith(f"error: cannot write {results}/") and "--out DIR" in err, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert sorted(p.name for p in results.iterdir()) == before


def test_out_writes_the_tables_and_the_report_elsewhere(mixed_dir, tmp_path, capsys):
    results, out = mixed_dir, tmp_path / "hand-in"
    before = sorted(p.name for p in results.iterdir())
    with unwritable(results):
        code = main(["collect", "--results", str(results), "--out", str(out), "--report", "--json"])
    assert code == 0, capsys.readouterr().err
    written = json.loads(capsys.readouterr().out)["written"]
    assert all(path.startswith(str(out)) for path in written)
    for name in ("report.html", "report.md", "tables.md", "table1.csv", "plots/table1_speedup.png"):
        assert (out / name).is_file(), name
    assert sorted(p.name for p in results.iterdir()) == before
