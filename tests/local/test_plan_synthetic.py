"""plan holds a synthetic training cell to what its set holds: one `error:` line naming the field
(exit 2, nothing planned) for sizes no run can honour, and the test images it evaluates shown."""
from __future__ import annotations

import pytest

from orchestrator.cli import main
from tests.helpers import TINY_STUDY, write_study

GOOD = TINY_STUDY.read_text()


@pytest.mark.parametrize("line, expected", [
    ("train_images = 100000000", "train_images must be <= 50000 for synthetic"),
    ("train_images = 64\ntest_images = 1000000", "test_images must be <= 10000 for synthetic"),
    ("train_images = 64\ntest_images = 500", "test_images = 500: the synthetic set has 100 test images"),
])
def test_plan_refuses_a_synthetic_size_no_run_honours(in_tmp, capsys, line, expected):
    study = write_study(in_tmp, GOOD.replace("train_images = 64", line, 1))
    code = main(["plan", "--study", str(study)])
    err = capsys.readouterr().err
    assert code == 2
    assert expected in err and err.startswith("error: ") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (in_tmp / "runs").exists()


def test_plan_says_a_synthetic_cell_evaluates_its_100_test_images(in_tmp, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "200")  # the cell table's columns whole
    assert main(["plan", "--study", str(TINY_STUDY), "--cells"]) == 0
    assert "synthetic 64 / test 100" in capsys.readouterr().out
