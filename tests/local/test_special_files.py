"""A FIFO (or any file that is not a regular file) named like a result: status and collect skip
it with a warning naming it, and never open it (reading a FIFO with no writer waits forever)."""
from __future__ import annotations

import json
import os
import re
import resource
import signal
from pathlib import Path

import pytest

from jobs.core.layout import result_path
from jobs.core.result import NotRegularFile, read_good_result, read_result
from results_format import registry
from orchestrator.cli import main
from results_format.errors import RegistryError
from results_format.registry import Submission
from tests.helpers import TINY_STUDY, cli, cli_json, one_gpu_machine


@pytest.fixture
def deadline():
    """A hang fails the test in 10 s, and a read without end (/dev/zero) at 2 GB more memory,
    instead of hanging the suite or taking the machine's memory."""
    def expired(*_):
        raise TimeoutError("hung on a result file that is not a regular file")
    old = signal.signal(signal.SIGALRM, expired)
    signal.alarm(10)
    limits = resource.getrlimit(resource.RLIMIT_DATA)
    used = int(next(line for line in Path("/proc/self/status").read_text().splitlines()
                    if line.startswith("VmData:")).split()[1]) * 1024
    resource.setrlimit(resource.RLIMIT_DATA, (used + (2 << 30), limits[1]))
    yield
    resource.setrlimit(resource.RLIMIT_DATA, limits)
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


@pytest.mark.parametrize("link", ["a loop", "to nothing"])
def test_status_names_a_result_link_that_leads_nowhere(in_tmp, capsys, link):
    """Issue 45, Low: a symlink loop named <cell>.json was silent in `status`."""
    assert main(["plan", "--study", str(TINY_STUDY)]) == 0
    results = in_tmp / "runs" / "tiny"
    path = result_path(results, json.loads((results / "plan.json").read_text())["arrays"][0]["cell_ids"][0])
    path.symlink_to(path.name if link == "a loop" else "gone.json")
    capsys.readouterr()
    assert main(["status", "--study", str(TINY_STUDY)]) == 0
    assert f"warning: result file {path.absolute()} cannot be read" in capsys.readouterr().err


def test_collect_skips_a_fifo_result_with_a_warning_naming_it(fifo_results, capsys, deadline):
    results, cell_id = fifo_results
    assert main(["collect", "--study", str(TINY_STUDY)]) == 0
    captured = capsys.readouterr()
    assert "warning: result file" in captured.err and f"{cell_id}.json is not a regular file" in captured.err


# ---------------------------------------------------------------- the other files of a results dir

def make_special(path: Path, special: str) -> None:
    """A FIFO (reading it waits for a writer forever) or a link to /dev/zero (it never ends)."""
    path.unlink(missing_ok=True)
    if special == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


@pytest.fixture
def planned(in_tmp, capsys):
    assert main(["plan", "--study", str(TINY_STUDY)]) == 0
    capsys.readouterr()
    return in_tmp / "runs" / "tiny"


@pytest.mark.parametrize("special", ["fifo", "zero"])
def test_a_status_cache_that_is_no_regular_file_is_named_and_replaced(planned, capsys, deadline, special):
    cell_id = json.loads((planned / "plan.json").read_text())["arrays"][0]["cell_ids"][0]
    result_path(planned, cell_id).write_text("{}")  # a result to read: status looks in its cache first
    make_special(planned / ".status-cache", special)
    _, _, err = cli(capsys, "status", "--study", TINY_STUDY)
    assert f"warning: status cache {planned.absolute() / '.status-cache'} is not a regular file" in err
    assert (planned / ".status-cache").is_file() and not (planned / ".status-cache").is_symlink()


@pytest.mark.parametrize("name, what", [("registry.jsonl", "registry"), ("plan.json", "plan file")])
@pytest.mark.parametrize("special", ["fifo", "zero"])
@pytest.mark.parametrize("verb", ["status", "submit", "collect"])
def test_a_registry_or_plan_that_is_no_regular_file_is_one_error_line(planned, capsys, deadline, special, name,
                                                                      what, verb):
    make_special(planned / name, special)
    extra = ["--executor", "local"] if verb == "submit" else []
    code, _, err = cli(capsys, verb, "--study", TINY_STUDY, *extra)
    assert code == 2 and "Traceback" not in err, err
    last = err.splitlines()[-1]  # collect warns first that it could not measure the GPU-hours spent, for that reason
    assert last.startswith("error: ") and re.search(rf"{what} \S*runs/tiny/{name} is not a regular file", last), err


@pytest.mark.parametrize("name, what", [(".submit.lock", "submit lock"), ("logs/local-queue.log", "local queue log")])
@pytest.mark.parametrize("special", ["fifo", "zero"])
def test_a_submit_lock_or_queue_log_that_is_no_regular_file_is_one_error_line(planned, capsys, deadline, special,
                                                                              name, what, tmp_path, monkeypatch):
    one_gpu_machine(tmp_path, monkeypatch)
    (planned / "logs").mkdir(exist_ok=True)
    make_special(planned / name, special)
    code, _, err = cli(capsys, "submit", "--study", TINY_STUDY, "--executor", "local")
    assert code == 2 and err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert re.search(rf"{what} \S*runs/tiny/{re.escape(name)} is not a regular file", err), err


def test_files_beyond_their_size_bound_are_named_not_read(planned, capsys, deadline):
    """Sparse files (no disk space) beyond the bounds: read whole, a larger one would take as much
    memory, and more to parse."""
    cell_id = json.loads((planned / "plan.json").read_text())["arrays"][0]["cell_ids"][0]
    with open(result_path(planned, cell_id), "wb") as f:
        f.truncate(65 << 20)
    shown = json.loads(cli(capsys, "status", "--study", TINY_STUDY, "--json")[1])
    assert [c["state"] for c in shown["cells"]].count("failed") == 1, shown["cells"]
    assert any("MB, more than" in e and f"{cell_id}.json" in e for e in shown["errors"]), shown
    with open(planned / "registry.jsonl", "wb") as f:
        f.truncate(513 << 20)
    code, _, err = cli(capsys, "status", "--study", TINY_STUDY)
    assert code == 2 and "registry" in err and "MB, more than" in err, err


@pytest.mark.parametrize("special", ["fifo", "zero"])
def test_logs_names_a_log_that_is_no_regular_file(planned, capsys, deadline, special):
    cell_id = json.loads((planned / "plan.json").read_text())["arrays"][0]["cell_ids"][0]
    logs = planned / "logs"
    logs.mkdir(exist_ok=True)
    (logs / "1_0_log.out").write_text("epoch 1\n")
    make_special(logs / "1_0_log.err", special)
    registry.append_entries(planned, [Submission(cell_id, "local", "1", "n1-g1-t1", registry.now_iso(),
                                         str(logs / "1_0_log.out"), str(logs / "1_0_log.err"), queue_pid=1)])
    code, out, err = cli(capsys, "logs", "--study", TINY_STUDY, cell_id)
    assert code == 0, err
    assert "epoch 1" in out
    assert f"log file {logs / '1_0_log.err'} is not a regular file" in err


def test_the_registry_is_never_appended_through_a_link(tmp_path):
    """registry.jsonl -> a file of yours elsewhere (~/.ssh/authorized_keys): nothing is written there."""
    victim = tmp_path / "authorized_keys"
    victim.write_text("ssh-ed25519 AAAA me\n")
    results = tmp_path / "results"
    results.mkdir()
    (results / "registry.jsonl").symlink_to(victim)
    sub = Submission("0123456789ab", "local", "1", "n1-g1-t1", registry.now_iso(), queue_pid=1)
    with pytest.raises(RegistryError, match=r"registry \S+ is not a regular file \(a link\)"):
        registry.append_entries(results, [sub])
    assert victim.read_text() == "ssh-ed25519 AAAA me\n"
