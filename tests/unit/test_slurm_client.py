"""orchestrator.slurm_client: reading squeue's and sacct's answers."""
from __future__ import annotations

import pytest

from orchestrator.slurm_client import JobState, parse_elapsed, parse_squeue, sacct_rows


@pytest.mark.parametrize("text, seconds", [
    ("0:00", 0.0),
    ("1:23", 83.0),  # minutes:seconds
    ("1:02:03", 3723.0),  # 3600 + 120 + 3
    ("2-00:00:01", 172_801.0),  # 2 x 86400 + 1
    ("1-02:03:04", 93_784.0),  # 86400 + 7200 + 180 + 4
    (" 59:59 ", 3599.0),
])
def test_parse_elapsed(text, seconds):
    assert parse_elapsed(text) == seconds


@pytest.mark.parametrize("text", ["INVALID", "N/A", "", "  "])
def test_parse_elapsed_without_a_time(text):
    assert parse_elapsed(text) is None


def test_parse_squeue():
    text = (
        "17_2|RUNNING|1:23|n1|None\n"
        "17_3|PENDING|0:00||Priority\n"
        "18_0|PENDING|INVALID||(ReqNodeNotAvail, Reserved for maintenance)\n"
        "garbage line\n"
        "\n"
    )
    jobs = parse_squeue(text)
    assert set(jobs) == {"17_2", "17_3", "18_0"}
    assert jobs["17_2"] == JobState("17_2", "RUNNING", 83.0, "n1", "")  # reason None -> ""
    assert jobs["17_3"] == JobState("17_3", "PENDING", 0.0, "", "Priority")
    assert jobs["18_0"].elapsed_s is None and jobs["18_0"].reason.startswith("(ReqNodeNotAvail")


def test_sacct_rows():
    text = (
        "17_0|COMPLETED|125|n1|0:0\n"
        "17_1|CANCELLED by 0|30|n2|0:15\n"
        "17_[2-3]|PENDING|0|None assigned|0:0\n"
        "17_4|FAILED|7|n1|1:0\n"
        "17_5|TIMEOUT|3600|n1,n2|0:0\n"
        "17_6|NODE_FAIL||n3|0:0\n"
        "short|line\n"
    )
    rows = sacct_rows(text)
    assert [j.job_id for j in rows] == ["17_0", "17_1", "17_4", "17_5", "17_6"]  # the array's summary row is skipped
    jobs = {j.job_id: j for j in rows}
    assert jobs["17_0"] == JobState("17_0", "COMPLETED", 125.0, "n1", "")
    assert jobs["17_1"].state == "CANCELLED" and jobs["17_1"].reason == "exit 0:15"
    assert jobs["17_4"] == JobState("17_4", "FAILED", 7.0, "n1", "exit 1:0")
    assert jobs["17_5"].elapsed_s == 3600.0 and jobs["17_5"].node == "n1,n2"
    assert jobs["17_6"].elapsed_s is None


def test_sacct_rows_empty_state_reads_unknown():
    assert [j.state for j in sacct_rows("17_0||5|n1|0:0\n")] == ["UNKNOWN"]
