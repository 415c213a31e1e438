"""The local executor on a machine of 4 (fake) GPUs: cells side by side on disjoint GPUs, two
queues included, never two on one GPU; --exclusive one at a time; each result says what ran beside it."""
from __future__ import annotations

import itertools
import time
from pathlib import Path

from jobs.core.beside import Beside
from jobs.core.layout import result_files
from jobs.core.result import Result, read_result
from orchestrator.cli import main
from tests.helpers import cell_states, cli, one_gpu_machine, write_study

STUDY = """
name = "{name}"
[cluster]
time_min = 5
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 32
loader_workers = 0
batch_per_gpu = 16
epochs = 2
timed_epoch = 2
{grids}
"""
ONES = '[[grid]]\nengine = "single"\ntrain_images = [2000]\nseed = [{seeds}]\n'  # long enough to overlap
PAIR = '[[grid]]\nengine = "ddp"\ngpus_per_node = 2\n'


def study(where: Path, name: str, grids: str) -> str:
    path = str(write_study(where, STUDY.format(name=name, grids=grids), name))
    assert main(["plan", "--study", path]) == 0
    return path


def wait_done(studies: list[str], capsys, seconds: float = 400) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        states = [c["state"] for s in studies for c in cell_states(capsys, s)]
        if all(s in ("done", "failed") for s in states):
            assert set(states) == {"done"}, states
            return
        time.sleep(1)
    raise AssertionError(f"cells not done in {seconds} s: {states}")


def results(where: Path, *names: str) -> list[Result]:
    return [read_result(p) for name in names for p in result_files(where / "runs" / name)]


def overlapping(a: Result, b: Result) -> bool:
    return a.env["started_at"] < b.env["ended_at"] and b.env["started_at"] < a.env["ended_at"]


def gpus(result: Result) -> set[str]:
    return set(result.env["gpu_ids"].split(","))


def test_two_queues_pack_cells_on_disjoint_gpus_and_each_result_says_what_ran_beside_it(in_tmp, monkeypatch, capsys):
    one_gpu_machine(in_tmp, monkeypatch, gpus=4)
    first = study(in_tmp, "first", ONES.format(seeds="1, 2, 3") + PAIR)
    second = study(in_tmp, "second", ONES.format(seeds="4, 5, 6"))
    assert main(["submit", "--study", first, "--executor", "local"]) == 0
    assert main(["submit", "--study", second, "--executor", "local"]) == 0
    wait_done([first, second], capsys)
    found = results(in_tmp, "first", "second")
    assert len(found) == 7
    assert {r.env["gpu_ids"] for r in found if r.cell["engine"] == "ddp"} <= {"0,1", "2,3"}
    pairs = [(a, b) for a, b in itertools.combinations(found, 2) if overlapping(a, b)]
    assert any((a.cell["seed"] <= 3) != (b.cell["seed"] <= 3) for a, b in pairs), "the two queues' cells side by side"
    for a, b in pairs:
        assert not gpus(a) & gpus(b), (a.env, b.env)
        assert Beside.from_env(a.env).cells + Beside.from_env(b.env).cells > 0, "each sees the other start or run"


def test_exclusive_runs_one_cell_at_a_time_and_each_ran_alone(in_tmp, monkeypatch, capsys):
    """One at a time, the two 1-GPU cells one after another in one job (their set-up paid once), each
    with its own registry entry, state and part of the log."""
    one_gpu_machine(in_tmp, monkeypatch, gpus=4)
    alone = study(in_tmp, "alone", ONES.format(seeds="1, 2") + PAIR)
    assert main(["submit", "--study", alone, "--executor", "local", "--exclusive"]) == 0
    wait_done([alone], capsys)
    found = results(in_tmp, "alone")
    assert not any(overlapping(a, b) for a, b in itertools.combinations(found, 2))
    assert sorted((r.env["gpu_ids"], r.env["cells_beside"], r.env["gpus_beside"]) for r in found) == [
        ("0", 0, 0), ("0", 0, 0), ("0,1", 0, 0)]
    ones = [c for c in cell_states(capsys, alone) if c["label"].startswith("single")]
    assert len(ones) == 2 and ones[0]["job_id"] == ones[1]["job_id"]
    assert sorted(r.phases.cells_before for r in found) == [0, 0, 1], "the second 1-GPU cell reused the set-up"
    code, out, _ = cli(capsys, "logs", "--study", alone, ones[1]["cell_id"])
    assert code == 0 and ones[1]["cell_id"] in out and f"[{ones[0]['cell_id']}]" not in out
