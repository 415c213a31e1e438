"""orchestrator.slurm.slurm_client: reading squeue's and sacct's answers."""
from __future__ import annotations

import os

import pytest

from orchestrator.errors import SchedulerError
from orchestrator.slurm.slurm_client import JobState, SlurmClient, parse_elapsed, parse_squeue, sacct_rows
from orchestrator.slurm.submitit_adapter import submit_slurm_array
from tests.scripted_slurm import plan_of


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


@pytest.mark.parametrize("text", ["INVALID", "N/A", "", "  ", "UNLIMITED", "abc", "1:a", "1:2:3:4", "-5:00", "1-", "1e3:00"])
def test_parse_elapsed_without_a_time(text):  # issue 45 item 8: these raised ValueError, "-5:00" read 300 s
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
    assert [j.job_id for j in rows] == ["17_0", "17_1", "17_2", "17_3", "17_4", "17_5", "17_6"]  # a summary row: its tasks
    jobs = {j.job_id: j for j in rows}
    assert jobs["17_0"] == JobState("17_0", "COMPLETED", 125.0, "n1", "")
    assert jobs["17_1"].state == "CANCELLED" and jobs["17_1"].reason == "exit 0:15"
    assert jobs["17_4"] == JobState("17_4", "FAILED", 7.0, "n1", "exit 1:0")
    assert jobs["17_5"].elapsed_s == 3600.0 and jobs["17_5"].node == "n1,n2"
    assert jobs["17_6"].elapsed_s is None


def test_an_array_cancelled_while_pending_is_each_task_cancelled_after_nothing():
    """Issue 45 item 2: sacct keeps only the summary row of an array scancelled while pending; it was
    skipped, and the cells read failed and charged their time limit."""
    rows = sacct_rows("39_[0-1,4]|CANCELLED by 0|0|None assigned|0:0||n1-g1-tok\n40_[0-2%1]|CANCELLED by 0|0||0:0\n")
    assert [(j.job_id, j.state, j.elapsed_s) for j in rows] == [
        ("39_0", "CANCELLED", 0.0), ("39_1", "CANCELLED", 0.0), ("39_4", "CANCELLED", 0.0),
        ("40_0", "CANCELLED", 0.0), ("40_1", "CANCELLED", 0.0), ("40_2", "CANCELLED", 0.0)]
    assert rows[0].name == "n1-g1-tok"


@pytest.mark.parametrize("job_id", ["39_[a-b]", "39_[]", "39_[0-9999999999]", "39_[1-]x"])
def test_an_unreadable_or_huge_summary_row_names_no_task(job_id):
    assert sacct_rows(f"{job_id}|CANCELLED|0||0:0\n") == []


def test_sacct_rows_empty_state_reads_unknown():
    assert [j.state for j in sacct_rows("17_0||5|n1|0:0\n")] == ["UNKNOWN"]


def test_scheduler_output_that_is_not_utf8_is_read(tmp_path, monkeypatch):
    """Another job of the user is named $'caf\\xe9' (Latin-1), and sacct has a byte 0xff: every
    verb asks squeue and sacct, and must still read their answers."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for command, text in {
        "squeue": r"17_0|RUNNING|1:00|n1|None|study-a-tok1\n9|RUNNING|2:00|n2|None|caf\351\n",
        "sacct": r"17_1|COMPLETED|60|n1|0:0|gres/gpu=1|study-a-tok1\n8|FAILED|5|n\377|1:0||caf\351\n",
        "scancel": r"scancel: error: Kill job error on job id caf\351\n",
    }.items():
        (bin_dir / command).write_text(f"#!/bin/sh\nprintf '{text}'\nprintf '{text}' >&2\n")
        (bin_dir / command).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    client = SlurmClient(user="me")
    snap = client.snapshot({"17_0": "tok1", "17_1": "tok1"}, charged=["8"])
    assert snap.jobs["17_0"].state == "RUNNING" and snap.jobs["17_1"].state == "COMPLETED"
    assert [run.node for run in snap.runs] == ["n\ufffd"]
    client.cancel(["17_0"])  # scancel's words are read too (it exits 0 here)


@pytest.mark.parametrize("exit_code", [0, 1])
def test_an_sbatch_answer_that_is_not_utf8_is_read(tmp_path, monkeypatch, exit_code):
    """A site's sbatch warning in Latin-1: a queued array is recorded (not taken for a refusal,
    its calls deleted), and a refusal is said in sbatch's words."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text("#!/bin/sh\nprintf 'sbatch: error: caf\\351 is over its quota\\n' >&2\n"
                                    f"[ {exit_code} = 0 ] && echo 'Submitted batch job 42'\nexit {exit_code}\n")
    (bin_dir / "sbatch").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    plan = plan_of(tmp_path)
    array = plan.arrays[0]
    cells = [plan.cell(cid) for cid in array.cell_ids]
    if exit_code == 0:
        subs = submit_slurm_array(plan, array, cells)
        assert [s.job_id for s in subs] == ["42_0", "42_1", "42_2"]
    else:
        with pytest.raises(SchedulerError, match="caf\ufffd is over its quota"):
            submit_slurm_array(plan, array, cells)
