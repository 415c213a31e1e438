"""A FIFO (or any file that is not a regular file) named like a result: status and collect skip
it with a warning naming it, and never open it (reading a FIFO with no writer waits forever)."""
from __future__ import annotations

import json
import os
import signal

import pytest

from jobs.core.layout import result_path
from jobs.core.result import NotRegularFile, read_good_result, read_result
from orchestrator.cli import main
from tests.helpers import TINY_STUDY, cli_json


@pytest.fixture
def deadline():
    """A hang fails the test in 10 s instead of hanging the suite."""
    def expired(*_):
        raise TimeoutError("hung on a result file that is not a regular file")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture
def fifo_results(in_tmp, capsys):
    assert main(["plan", "--study", str(TINY_STUDY)]) == 0
    results = in_tmp / "runs" / "tiny"
    cell_id = json.loads((results / "plan.json").read_text())["arrays"][0]["cell_ids"][0]
    os.mkfifo(result_path(results, cell_id))
    capsys.readouterr()
    return results, cell_id


def test_the_reader_refuses_a_fifo_without_opening_it(tmp_path, deadline):
    path = tmp_path / "0123456789ab.json"
    os.mkfifo(path)
    with pytest.raises(NotRegularFile, match=f"{path} is not a regular file"):
        read_result(path)
    assert read_good_result(tmp_path, "0123456789ab") is None


def test_status_skips_a_fifo_result_with_a_warning_naming_it(fifo_results, capsys, deadline):
    results, cell_id = fifo_results
    assert main(["status", "--study", str(TINY_STUDY)]) == 0
    err = capsys.readouterr().err
    assert f"warning: result file {result_path(results, cell_id).absolute()} is not a regular file (a FIFO)" in err
    shown = cli_json(capsys, "status", "--study", TINY_STUDY)
    assert [c["state"] for c in shown["cells"]] == ["not submitted"] * 4
    assert len(shown["skipped_files"]) == 1 and f"{cell_id}.json" in shown["skipped_files"][0]


def test_collect_skips_a_fifo_result_with_a_warning_naming_it(fifo_results, capsys, deadline):
    results, cell_id = fifo_results
    assert main(["collect", "--study", str(TINY_STUDY)]) == 0
    captured = capsys.readouterr()
    assert "warning: result file" in captured.err and f"{cell_id}.json is not a regular file" in captured.err
