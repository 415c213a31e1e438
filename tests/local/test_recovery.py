"""The registry's intents and their recovery, why a cell ended, polite polling, and damaged
files: against a scripted scheduler (no SLURM needed)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from jobs.core.result import write_result
from results_format import registry
from orchestrator.watch import why_ended
from orchestrator.cli import main
from orchestrator.slurm.recovery import INTENT_GRACE_S, recover
from results_format.registry import Intent, Submission
from orchestrator.slurm.slurm_client import JobState
from orchestrator.watch.status import Monitor, cell_state
from tests.factories import cell, train_result
from tests.scripted_slurm import NOW, ScriptedSlurm, iso, plan_of

def intent(token="t1", cells=("a", "b", "c"), seconds_ago=60.0) -> Intent:
    return Intent(token, "n1-g1-t1", f"s-n1-g1-t1-{token}", tuple(cells), iso(seconds_ago), "/r/logs")


# --- recovery (pure) -------------------------------------------------------------------------

def test_an_unconfirmed_intent_found_by_its_token_records_task_i_as_cell_i():
    jobs = {"41_1": JobState("41_1", "PENDING", name="s-n1-g1-t1-t1")}
    found = recover([intent()], set(), jobs, NOW)
    assert [(s.cell_id, s.job_id, s.token) for s in found.submissions] == [("a", "41_0", "t1"), ("b", "41_1", "t1"),
                                                                            ("c", "41_2", "t1")]
    assert found.submissions[0].log_err == "/r/logs/41_0_0_log.err" and not found.abandoned


def test_cells_already_confirmed_are_not_recorded_twice():
    jobs = {"41_0": JobState("41_0", "RUNNING", name="s-n1-g1-t1-t1")}
    found = recover([intent()], {("t1", "a")}, jobs, NOW)
    assert [s.cell_id for s in found.submissions] == ["b", "c"]


def test_an_intent_no_job_carries_is_in_flight_then_abandoned():
    young = recover([intent(seconds_ago=INTENT_GRACE_S / 3)], set(), {}, NOW)
    assert young.in_flight and not young.abandoned and not young.submissions
    old = recover([intent(seconds_ago=INTENT_GRACE_S + 1)], set(), {}, NOW)
    assert [a.token for a in old.abandoned] == ["t1"] and not old.in_flight


def test_registry_knows_which_intents_are_unconfirmed(tmp_path):
    registry.append_entries(tmp_path, [intent("t1"), intent("t2", ("d",)), intent("t3", ("e",))])
    registry.append_entries(tmp_path, [Submission("a", "slurm", "41_0", "x", iso(0), token="t1"),
                               Submission("d", "slurm", "42_0", "x", iso(0), token="t2"),
                               registry.Abandoned("t3", iso(0), "refused")])
    assert [i.token for i in registry.load(tmp_path).unconfirmed] == ["t1"]  # b and c of t1 never confirmed


def test_a_write_cut_short_by_a_kill_loses_only_its_own_line(tmp_path):
    registry.append_entries(tmp_path, [intent("t1", ("a",))])
    with open(tmp_path / registry.REGISTRY_FILE, "a") as f:
        f.write('{"array": "n1-g1-t1", "cell_id": "a", "exe')  # SIGKILL mid-write
    registry.append_entries(tmp_path, [intent("t2", ("b",))])
    state = registry.load(tmp_path)
    assert not state.errors and set(state.intents) == {"t1", "t2"}


# --- status through the monitor ----------------------------------------------------------------

def test_status_recovers_an_interrupted_submit_and_records_it(tmp_path):
    plan = plan_of(tmp_path)
    ids = [c.cell_id for c in plan.cells]
    name = "s-n1-g1-t1-t9"
    registry.append_entries(tmp_path, [Intent("t9", "n1-g1-t1", name, tuple(ids), iso(5), str(plan.log_dir))])
    client = ScriptedSlurm(squeue="".join(f"77_{i}|PENDING|0:00||Priority|{name}\n" for i in range(3)))
    report = Monitor(plan, client).refresh()
    assert [(r.state, r.job_id) for r in report.rows] == [("pending", f"77_{i}") for i in range(3)]
    assert client.calls == {"squeue": 1}  # squeue found them all: no sacct
    assert [s.job_id for s in registry.load(tmp_path).submissions] == ["77_0", "77_1", "77_2"]


def test_one_squeue_and_one_sacct_per_refresh_for_a_thousand_cells(tmp_path):
    plan = plan_of(tmp_path, 1000)
    ids = [c.cell_id for c in plan.cells]
    registry.append_entries(tmp_path, [Submission(c, "slurm", f"5_{i}", "n1-g1-t1", iso(600), token="t")
                               for i, c in enumerate(ids)])
    squeue = "".join(f"5_{i}|RUNNING|1:00|n1|None|s-n1-g1-t1-t\n" for i in range(500))
    sacct = "".join(f"5_{i}|{'COMPLETED' if i % 2 else 'TIMEOUT'}|60|n2|0:0||s-n1-g1-t1-t\n" for i in range(500, 1000))
    client = ScriptedSlurm(squeue, sacct)
    monitor = Monitor(plan, client)
    for refresh in range(1, 4):
        rows = monitor.refresh().rows
        assert client.calls == {"squeue": refresh, "sacct": refresh}
    assert client.commands[1][-2:] == ["-j", "5"]  # sacct asks about our array, not the whole cluster
    states = [r.state for r in rows]
    assert states.count("running") == 500 and states.count("timeout") == 250 and states.count("failed") == 250


def test_without_accounting_one_warning_and_sacct_is_not_asked_again(tmp_path):
    plan = plan_of(tmp_path, 2)
    a, b = (c.cell_id for c in plan.cells)
    registry.append_entries(tmp_path, [Submission(a, "slurm", "5_0", "x", iso(600)), Submission(b, "slurm", "5_1", "x", iso(600))])
    write_result(tmp_path, train_result(plan.cells[0]))
    client = ScriptedSlurm(squeue="", sacct=None)
    monitor = Monitor(plan, client)
    first, second = monitor.refresh(), monitor.refresh()
    assert "sacct unavailable" in first.warning and first.warning == second.warning
    assert client.calls == {"squeue": 2, "sacct": 1}
    assert [r.state for r in second.rows] == ["done", "failed"]
    assert "no accounting here to say why" in second.rows[1].detail


def test_a_corrupt_registry_line_and_result_file_leave_status_listing_every_cell(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    plan = plan_of(tmp_path / "r")
    a, b, c = (cell.cell_id for cell in plan.cells)
    write_result(plan.results_dir, train_result(plan.cells[0]))
    (Path(plan.results_dir) / f"{b}.json").write_text('{"cell_id": ')
    with open(Path(plan.results_dir) / registry.REGISTRY_FILE, "a") as f:
        f.write("this is not json\n")
    code = main(["status", "--study", "s", "--results", "r", "--json"])
    out, err = capsys.readouterr()
    assert code == 2
    assert [c["state"] for c in json.loads(out)["cells"]] == ["done", "failed", "not submitted"]
    assert err.startswith("error: registry") and "line 1 is corrupt" in err and "(and 1 more)" in err
    assert len(err.strip().splitlines()) == 1
    code = main(["submit", "--study", "s", "--results", "r", "--executor", "local"])
    err = capsys.readouterr().err
    assert code == 2 and "line 1 is corrupt" in err and err.rstrip().endswith("fix or delete that line")
    assert registry.load(Path(plan.results_dir)).submissions == []  # nothing queued


@pytest.mark.parametrize("line", [
    {"executor": "local", "job_id": "abc"}, {"submitted_at": "2025-01-01T00:00:00"}, {"job_id": 123},
])
def test_a_registry_line_of_wrong_types_is_an_error_naming_it_not_a_traceback(tmp_path, monkeypatch, capsys, line):
    monkeypatch.chdir(tmp_path)
    plan = plan_of(tmp_path / "r")
    good = Submission(plan.cells[0].cell_id, "slurm", "5_0", "n1-g1-t1", iso(60))
    text = registry.to_line(good).rstrip("\n")
    (Path(plan.results_dir) / registry.REGISTRY_FILE).write_text(
        json.dumps({**json.loads(text), **line}) + "\n")
    code = main(["status", "--study", "s", "--results", "r", "--json"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("error: registry") and "line 1 is corrupt" in err, err
    assert len(err.strip().splitlines()) == 1


def test_an_intent_with_a_bad_timestamp_is_an_error_naming_it(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    plan = plan_of(tmp_path / "r")
    bad = Intent("t1", "n1-g1-t1", "s-n1-g1-t1-t1", (plan.cells[0].cell_id,), "nope", str(plan.log_dir))
    registry.append_entries(Path(plan.results_dir), [bad])
    code = main(["status", "--study", "s", "--results", "r", "--json"])
    err = capsys.readouterr().err
    assert code == 2 and "line 1 is corrupt" in err and "created_at" in err, err


def test_a_job_id_reused_after_a_slurm_restart_is_not_taken_for_the_cells_job(tmp_path):
    from orchestrator.cancel import cancel

    plan = plan_of(tmp_path, 1)
    cid = plan.cell_ids[0]
    registry.append_entries(tmp_path, [Submission(cid, "slurm", "7_0", "n1-g1-t1", iso(3600), token="old1")])
    squeue = "7_0|RUNNING|1:00|n1|None|other-n1-g1-t1-new2\n"  # SLURM started over: 7_0 is someone else's
    sacct = "7_0|COMPLETED|60|n2|0:0||s-n1-g1-t1-old1\n7_0|RUNNING|60|n1|0:0||other-n1-g1-t1-new2\n"
    client = ScriptedSlurm(squeue, sacct)
    row = Monitor(plan, client).refresh().rows[0]
    assert (row.state, row.job_state) == ("failed", "COMPLETED"), row
    assert cancel(plan, [cid], client).cancelled == [] and not any(c[0] == "scancel" for c in client.commands)


# --- why a cell ended --------------------------------------------------------------------------

SUB = Submission("c", "slurm", "17_0", "n1-g1-t1", iso(600))


@pytest.mark.parametrize("word, state, words", [
    ("OUT_OF_MEMORY", "failed", ["OUT_OF_MEMORY", "raise mem_gb", "--retry-failed"]),
    ("TIMEOUT", "timeout", ["TIMEOUT", "10 min", "--retry-failed --time-min 20"]),
    ("NODE_FAIL", "failed", ["NODE_FAIL", "node n3"]),
    ("PREEMPTED", "failed", ["PREEMPTED", "--retry-failed"]),
    ("CANCELLED", "cancelled", ["CANCELLED"]),
])
def test_slurm_says_why_and_the_detail_names_the_fix(word, state, words):
    got_state, detail = cell_state(SUB, None, JobState("17_0", word, 5.0, "n3"), time_min=10)
    assert got_state == state and all(w in detail for w in words), detail


def test_a_python_error_shows_its_last_line_from_the_result_or_the_log():
    error = "Traceback (most recent call last):\n  File x\nValueError: bad shape\n"
    assert cell_state(SUB, train_result(cell("single", 8), "failed", error=error),
                      JobState("17_0", "FAILED", reason="exit 1:0")) == ("failed", "ValueError: bad shape")
    log = "submitit INFO x\nTraceback (most recent call last):\n  File y\nModuleNotFoundError: No module named 'z'\n" \
          "submitit ERROR (2026) - Submitted job triggered an exception\n"
    assert cell_state(SUB, None, JobState("17_0", "FAILED", reason="exit 1:0"), log_text=log) == \
        ("failed", "ModuleNotFoundError: No module named 'z'")


@pytest.mark.parametrize("log, word", [
    ("slurmstepd: error: *** JOB 17 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO TIME LIMIT ***", "TIMEOUT"),
    ("slurmstepd: error: *** JOB 17 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO PREEMPTION ***", "PREEMPTED"),
    ("slurmstepd: error: *** JOB 17 ON n1 CANCELLED AT 2026-01-01T00:00:00 ***", "CANCELLED"),
    ("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=17.0", "OUT_OF_MEMORY"),
    ("*** JOB 17 ON n1 CANCELLED AT 2026-01-01T00:00:00 DUE TO JOB REQUEUE ***\nepoch 3/6", ""),
])
def test_without_accounting_the_log_says_why(log, word):
    assert why_ended.word_from_log(log) == word
