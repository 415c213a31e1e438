"""What collect says where it cannot do what was asked: each line true to the case (issue 36's
misleading messages), and no file written through a link out of the results dir."""
from __future__ import annotations

import json

import pytest

from orchestrator.cli import main
from tests.collect.dirs import SINGLE, repeats
from tests.factories import write_results
from tests.helpers import cli


def test_a_threshold_beyond_its_limit_says_the_limit(tmp_path, capsys):
    with pytest.raises(SystemExit):
        main(["collect", "--results", str(tmp_path), "--compare", str(tmp_path), "--threshold", "1000"])
    err = capsys.readouterr().err
    assert "above 0 and below 1000" in err and "1000" in err


def test_an_unwritable_out_is_not_told_to_pass_out(tmp_path, capsys):
    results = write_results(tmp_path / "r", repeats(SINGLE, 10.0))
    (tmp_path / "file").write_text("")
    code, _, err = cli(capsys, "collect", "--results", results, "--out", tmp_path / "file" / "out")
    assert code == 2 and "pass --out DIR to write them elsewhere" not in err and "a dir you can write" in err


def test_results_of_a_newer_schema_are_not_told_to_rerun_submit(tmp_path, capsys):
    results = write_results(tmp_path / "r", repeats(SINGLE, 10.0))
    for path in sorted(results.glob("*.json"))[:3]:
        if path.name != "plan.json":
            path.write_text(json.dumps(dict(json.loads(path.read_text()), schema_version=2)))
    code, _, err = cli(capsys, "collect", "--results", results)
    assert code == 2 and "rerun `submit`" not in err.split("The first")[0] and "upgrade it" in err


def test_an_empty_dir_is_one_error_line_and_no_tables(tmp_path, capsys):
    code, out, err = cli(capsys, "collect", "--results", tmp_path)
    assert code == 2 and "no plan and no results" in err and list(tmp_path.iterdir()) == []


def test_report_plots_are_never_written_through_a_link_out_of_the_results_dir(tmp_path, capsys):
    results = write_results(tmp_path / "r", repeats(SINGLE, 10.0))
    outside = tmp_path / "outside"
    outside.mkdir()
    (results / "plots").symlink_to(outside)
    code, _, err = cli(capsys, "collect", "--results", results, "--report")
    assert code == 2 and f"{results / 'plots'} is a symbolic link" in err and list(outside.iterdir()) == []
    code, _, err = cli(capsys, "collect", "--results", results, "--compare", results, "--report")
    assert list(outside.iterdir()) == []
