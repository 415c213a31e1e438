"""Q1, Q2 and Q4 as the strict TA of issue 44 read them (the defect's number in each docstring), on run 8's
hw5 set and on small hand-made sets: each test failed before its fix."""
from __future__ import annotations

import shutil

import pytest

from collect.report import collect
from tests.collect.dirs import REAL_HW5
from tests.factories import cell, train_result, write_results


def _answers(path):
    return {a.id: a for a in collect(path).answers}


@pytest.fixture(scope="module")
def run8(tmp_path_factory):
    path = shutil.copytree(REAL_HW5, tmp_path_factory.mktemp("sets") / "hw5")
    return _answers(path), (path / "tables.md").read_text()


def test_the_one_host_setup_has_one_name_in_answers_and_tables(run8):
    """6, 21: run 8's 2 x 2 cells ran on one host; tables said "2 nodes x 2 GPUs", answers "4 GPUs (2 x 2 on
    one host)": one name everywhere, and no "2 nodes"/"2-node" left in either."""
    answers, tables = run8
    name = "4 GPUs on one host (launched as 2 x 2), DDP"
    assert name in tables and "nodes x" not in tables and name in answers["A.Q2"].text
    for q in ("A.Q2", "A.Q3.1", "A.Q3.2"):
        text = answers[q].text
        assert "nodes x" not in text and "2-node" not in text, q
