"""results_format.registry: the append-only JSON-lines record of which job runs which cell."""
from __future__ import annotations

import re

import pytest

from orchestrator.errors import RegistryError
from jobs.core.layout import REGISTRY_FILE
from results_format import registry
from results_format.registry import Abandoned, Cancelled, Intent, Skipped, Submission, append_entries, load
from tests.two_users import as_nobody


def submissions(path) -> list[Submission]:
    state = load(path)
    assert not state.errors, state.errors
    return state.submissions


def first_error(path) -> str:
    errors = load(path).errors
    assert errors, "a corrupt line is named"
    return errors[0]


def sub(cell_id: str, job_id: str | None, at: str = "2025-01-01T00:00:00+00:00", **extra) -> Submission:
    return Submission(cell_id, "slurm", job_id, "n1-g1-t1", at, **extra)


def test_empty_registry(tmp_path):
    assert submissions(tmp_path) == [] and load(tmp_path).latest == {}


def test_append_and_read_back(tmp_path):
    first = [sub("a", "17_0", log_out="/l/17_0_0_log.out"), sub("b", "17_1")]
    append_entries(tmp_path, first)
    assert submissions(tmp_path) == first
    assert (tmp_path / REGISTRY_FILE).read_text().count("\n") == 2


def test_newest_line_wins(tmp_path):
    append_entries(tmp_path, [sub("a", "17_0"), sub("b", "17_1")])
    append_entries(tmp_path, [sub("a", "18_0", at="2025-01-02T00:00:00+00:00")])
    now = load(tmp_path).latest
    assert now["a"].job_id == "18_0" and now["b"].job_id == "17_1"
    assert len(submissions(tmp_path)) == 3


def test_local_queue_entry_then_its_job(tmp_path):
    append_entries(tmp_path, [Submission("a", "local", None, "n1-g1-t1", "2025-01-01T00:00:00+00:00", queue_pid=4321)])
    assert load(tmp_path).latest["a"].queue_pid == 4321 and load(tmp_path).latest["a"].job_id is None
    append_entries(tmp_path, [Submission("a", "local", "5555", "n1-g1-t1", "2025-01-01T00:00:01+00:00", queue_pid=4321)])
    assert load(tmp_path).latest["a"].job_id == "5555"


def test_appending_nothing_writes_nothing(tmp_path):
    append_entries(tmp_path, [])
    assert not (tmp_path / REGISTRY_FILE).exists()


def test_a_truncated_last_line_is_ignored(tmp_path):
    append_entries(tmp_path, [sub("a", "17_0")])
    with open(tmp_path / REGISTRY_FILE, "a") as f:
        f.write('{"cell_id": "b", "executor": "slu')  # a crash mid-write: no newline
    assert [s.cell_id for s in submissions(tmp_path)] == ["a"]


def test_appending_after_a_truncated_line_keeps_the_registry_readable(tmp_path):
    append_entries(tmp_path, [sub("a", "17_0")])
    with open(tmp_path / REGISTRY_FILE, "a") as f:
        f.write('{"cell_id": "b", "executor": "slu')
    append_entries(tmp_path, [sub("b", "18_0")])
    assert load(tmp_path).latest["b"].job_id == "18_0"


def test_a_corrupt_full_line_names_its_number(tmp_path):
    append_entries(tmp_path, [sub("a", "17_0")])
    with open(tmp_path / REGISTRY_FILE, "a") as f:
        f.write("\n")  # blank lines are skipped but still counted
        f.write("not json\n")
    append_entries(tmp_path, [sub("b", "17_1")])
    assert re.search(r"line 3 is corrupt.*fix or delete that line", first_error(tmp_path))


def test_a_line_with_unknown_keys_is_corrupt(tmp_path):
    (tmp_path / REGISTRY_FILE).write_text('{"cell_id": "a", "colour": "red"}\n')
    assert re.search("line 1", first_error(tmp_path))


def test_an_unwritable_dir_raises_registry_error(tmp_path):
    with pytest.raises(RegistryError, match="cannot write the registry"):
        append_entries(tmp_path / "no" / "such" / "dir", [sub("a", "1")])


GOOD_SUB = {"cell_id": "a", "executor": "slurm", "job_id": "17_0", "array": "n1-g1-t1",
            "submitted_at": "2025-01-01T00:00:00+00:00"}
GOOD_INTENT = {"kind": "intent", "token": "t1", "array": "n1-g1-t1", "job_name": "s-n1-g1-t1-t1", "cell_ids": ["a"],
               "created_at": "2025-01-01T00:00:00+00:00", "log_dir": "/r/logs"}


@pytest.mark.parametrize("line, named", [
    ({**GOOD_SUB, "executor": "local", "job_id": "abc"}, "job_id"),
    ({**GOOD_SUB, "submitted_at": "2025-01-01T00:00:00"}, "submitted_at"),
    ({**GOOD_SUB, "submitted_at": "yesterday"}, "submitted_at"),
    ({**GOOD_SUB, "job_id": 123}, "job_id"),
    ({**GOOD_SUB, "job_id": "17_0; rm"}, "job_id"),
    ({**GOOD_SUB, "executor": "pbs"}, "executor"),
    ({**GOOD_SUB, "queue_pid": "12"}, "queue_pid"),
    ({**GOOD_SUB, "cell_id": ["a"]}, "cell_id"),
    ({**GOOD_INTENT, "created_at": "nope"}, "created_at"),
    ({**GOOD_INTENT, "cell_ids": "a"}, "cell_ids"),
    ({**GOOD_INTENT, "cell_ids": [1]}, "cell_ids"),
    ({"kind": "cancelled", "job_ids": [17], "at": "2025-01-01T00:00:00+00:00"}, "job_ids"),
    ({"kind": "abandoned", "token": None, "at": "2025-01-01T00:00:00+00:00", "why": "x"}, "token"),
])
def test_a_line_of_valid_json_with_wrong_types_is_corrupt_and_names_the_field(tmp_path, line, named):
    import json

    (tmp_path / REGISTRY_FILE).write_text(json.dumps(GOOD_SUB) + "\n" + json.dumps(line) + "\n")
    assert re.search(rf"line 2 is corrupt \(.*{named}", first_error(tmp_path))


def test_good_lines_of_every_kind_read_back_as_meant(tmp_path):
    """Hand-written lines of every kind, and the same records appended, read back as the same
    state: each submission, the intents by token, the abandoned token, the cancelled job, the
    skipped cell; the intent no submission confirms and no abandoned line closes is unconfirmed."""
    import json

    at = "2025-01-01T00:00:00+00:00"
    lines = [GOOD_SUB, {**GOOD_SUB, "executor": "local", "job_id": None, "queue_pid": 12}, GOOD_INTENT,
             {**GOOD_INTENT, "token": "t2", "cell_ids": ["b", "c"]}, {"kind": "abandoned", "token": "t2", "at": at,
                                                                      "why": "sbatch: invalid partition"},
             {"kind": "cancelled", "job_ids": ["17_0"], "at": at},
             {"kind": "skipped", "cell_id": "d", "why": "needs 2 GPUs, this machine has 1", "at": at}]
    (tmp_path / REGISTRY_FILE).write_text("".join(json.dumps(line) + "\n" for line in lines))
    state = load(tmp_path)
    intents = {"t1": Intent("t1", "n1-g1-t1", "s-n1-g1-t1-t1", ("a",), at, "/r/logs"),
               "t2": Intent("t2", "n1-g1-t1", "s-n1-g1-t1-t1", ("b", "c"), at, "/r/logs")}
    assert state.errors == []
    assert state.submissions == [sub("a", "17_0"), Submission("a", "local", None, "n1-g1-t1", at, queue_pid=12)]
    assert state.intents == intents and state.unconfirmed == [intents["t1"]]
    assert state.abandoned == {"t2"} and state.cancelled == {"17_0"}
    assert state.skipped == {"d": Skipped("d", "needs 2 GPUs, this machine has 1", at)}

    records = [*state.submissions, *intents.values(), Abandoned("t2", at, "sbatch: invalid partition"),
               Cancelled(("17_0",), at), Skipped("d", "needs 2 GPUs, this machine has 1", at)]
    (tmp_path / "appended").mkdir()
    append_entries(tmp_path / "appended", records)
    assert load(tmp_path / "appended") == state


def test_a_deeply_nested_line_is_corrupt(tmp_path):
    (tmp_path / REGISTRY_FILE).write_text("[" * 100_000 + "]" * 100_000 + "\n")
    assert re.search("line 1 is corrupt", first_error(tmp_path))


def test_another_users_submit_lock_is_named_as_theirs_not_as_an_unwritable_dir(shared_tmp):
    """Issue 45, Low: it read "cannot write in DIR" in a dir the user can write."""
    results = shared_tmp / "study"
    results.mkdir(mode=0o777)
    results.chmod(0o777)
    (results / ".submit.lock").touch(mode=0o644)  # root's: the labmate (nobody) cannot open it to write
    said = shared_tmp / "said.txt"

    def labmate() -> None:
        try:
            with registry.submit_lock(results):
                pass
        except RegistryError as exc:
            said.write_text(str(exc))

    as_nobody(labmate)
    assert said.read_text().startswith(f"{results / '.submit.lock'} is uid 0's (Permission denied): another user")
