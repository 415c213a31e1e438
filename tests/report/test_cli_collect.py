"""`python -m orchestrator collect` over a results dir: JSON keys, the report files, and exit 2
for a corrupt result file."""
from __future__ import annotations

import json

from orchestrator.cli import main


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
