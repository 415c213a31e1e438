"""On the real local SLURM: a submit killed half-way, two submits at once, requests SLURM
refuses, an unwritable results dir, a container and a hostile results path, failures that say
why, --retry-failed, logs and cancel."""
from __future__ import annotations

import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from results_format import registry
from orchestrator.cli import main
from tests.helpers import TINY_STUDY, cell_states, cli, unwritable, write_study

pytestmark = pytest.mark.slurm

FAKES = Path(__file__).parent / "bin"
ONE_CELL = """name = "{name}"
[cluster]
time_min = 5
cpus_per_task = 1
{cluster}
[container]
{container}
[defaults]
model = "tiny"
dataset = "synthetic"
train_images = 32
epochs = 1
timed_epoch = 1
loader_workers = 0
batch_per_gpu = 16
{grids}
"""


def study_file(where: Path, name: str, cluster: str = "", container: str = "",
               grids: str = '[[grid]]\nengine = "single"\n') -> str:
    return str(write_study(where, ONE_CELL.format(name=name, cluster=cluster, container=container, grids=grids), name))


def orchestrator(*argv, env=None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "orchestrator", *map(str, argv)], env=env,
                          capture_output=True, text=True, timeout=120)


def settled(capsys, study: str, timeout_s: float = 60) -> dict[str, str]:
    """cell -> state, once no cell is queued, pending or running (a cancelled job completes first)."""
    deadline = time.monotonic() + timeout_s
    while True:
        states = {c["cell_id"]: c["state"] for c in cell_states(capsys, study)}
        if not set(states.values()) & {"queued", "pending", "running"} or time.monotonic() > deadline:
            return states
        time.sleep(1)


def queued_tasks(results: Path) -> Counter:
    """How many array tasks SLURM holds (queued, running or ended) under each job name this
    results dir's submits used."""
    names = {i.job_name for i in registry.load(results).intents.values()}
    listed = subprocess.run(["squeue", "-h", "-r", "-t", "all", "-o", "%j"], capture_output=True, text=True,
                            errors="replace").stdout  # another job of the user may have a Latin-1 name
    return Counter(name for name in listed.split() if name in names)


def test_a_submit_killed_after_sbatch_then_run_again_queues_every_cell_once(slurm_cluster, in_tmp, capsys):
    study, results = str(TINY_STUDY), in_tmp / "runs" / "tiny"
    assert main(["plan", "--study", study]) == 0
    env = dict(os.environ, PATH=f"{FAKES}:{os.environ['PATH']}", ORCH_KILL_ON="2",
               ORCH_KILL_COUNTER=str(in_tmp / "sbatch-calls"))
    killed = orchestrator("submit", "--study", study, "--executor", "slurm", env=env)
    assert killed.returncode == -9, killed.stderr  # SIGKILL right after its 2nd sbatch returned
    state = registry.load(results)
    assert len(state.intents) == 2 and len(state.submissions) == 1 and len(state.unconfirmed) == 1

    # status (from a new shell) already finds the killed submit's array by its token
    states = Counter(c["state"] for c in cell_states(capsys, study))
    assert states["not submitted"] == 2, states
    code, out, _ = cli(capsys, "submit", "--study", study)
    assert code == 0 and "submitted 2 cell(s)" in out
    tasks = queued_tasks(results)
    assert sum(tasks.values()) == 4 and set(tasks.values()) == {1}  # 4 arrays of 1 cell, each queued once
    subs = registry.load(results).latest
    assert len(subs) == 4 and len({s.job_id for s in subs.values()}) == 4

    # the killed submit's job runs to a good result: it finds its call without that submit's help
    states = settled(capsys, study, timeout_s=240)
    assert list(states.values()) == ["done"] * 4, states


def test_an_sbatch_that_timed_out_but_queued_the_job_leaves_it_runnable(slurm_cluster, in_tmp, capsys):
    study = study_file(in_tmp, "slow")
    assert main(["plan", "--study", study]) == 0
    env = dict(os.environ, PATH=f"{FAKES}:{os.environ['PATH']}", ORCH_TIMEOUT_ON="1",
               ORCH_KILL_COUNTER=str(in_tmp / "sbatch-calls"))
    first = orchestrator("submit", "--study", study, "--executor", "slurm", env=env)
    assert first.returncode == 2 and "timed out" in first.stderr and "status" in first.stderr, first.stderr
    assert len(first.stderr.strip().splitlines()) == 1
    code, out, _ = cli(capsys, "submit", "--study", study)  # finds the job sbatch queued: queues nothing
    assert code == 0 and "submitted 0 cell(s)" in out
    assert sum(queued_tasks(in_tmp / "runs" / "slow").values()) == 1
    states = settled(capsys, study, timeout_s=180)
    assert list(states.values()) == ["done"], states


def test_two_submits_at_once_queue_each_cell_once(slurm_cluster, in_tmp, capsys):
    study, results = str(TINY_STUDY), in_tmp / "runs" / "tiny"
    assert main(["plan", "--study", study]) == 0
    command = [sys.executable, "-m", "orchestrator", "submit", "--study", study]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, text=True) for _ in range(2)]
    outs = sorted(p.communicate(timeout=120)[0] for p in procs)
    assert all(p.returncode == 0 for p in procs)
    assert "submitted 0 cell(s)" in outs[0] and "submitted 4 cell(s)" in outs[1]
    assert sum(queued_tasks(results).values()) == 4
    assert cli(capsys, "cancel", "--study", study, "--all")[0] == 0


def test_requests_slurm_refuses_are_one_line_exit_2_and_queue_nothing(slurm_cluster, in_tmp, capsys):
    study = study_file(in_tmp, "nopart", cluster='partition = "nope"')
    assert main(["plan", "--study", study]) == 0
    for argv in (["--test-only"], []):
        code, out, err = cli(capsys, "submit", "--study", study, *argv)
        assert code == 2 and err.startswith("error: SLURM refused array n1-g1-t1: ") and "Traceback" not in err
        assert "invalid partition" in err.lower() and "partitions here: debug, short" in err
        assert len(err.strip().splitlines()) == 1
    assert [c["state"] for c in cell_states(capsys, study)] == ["not submitted"]
    state = registry.load(in_tmp / "runs" / "nopart")
    assert not state.submissions and not state.unconfirmed  # the refused intent is marked abandoned

    study = study_file(in_tmp, "short", cluster='partition = "short"')
    assert main(["plan", "--study", study]) == 0
    code, out, _ = cli(capsys, "submit", "--study", study, "--test-only")
    assert code == 0 and "in partition short" in out and "nothing queued" in out
    code, _, err = cli(capsys, "submit", "--study", study, "--time-min", "20")  # short allows 10 min
    assert code == 2 and "time limit" in err.lower() and "time_min" in err and len(err.strip().splitlines()) == 1
    assert not registry.load(in_tmp / "runs" / "short").submissions


def test_an_unwritable_results_dir_is_exit_2_and_status_still_answers(slurm_cluster, in_tmp, capsys):
    study = study_file(in_tmp, "ro")
    assert main(["plan", "--study", study]) == 0
    results = in_tmp / "runs" / "ro"
    with unwritable(results):
        code, _, err = cli(capsys, "submit", "--study", study)
        assert code == 2 and err.startswith(f"error: cannot write in the results dir {results}")
        assert len(err.strip().splitlines()) == 1
        assert [c["state"] for c in cell_states(capsys, study)] == ["not submitted"]
    code, _, err = cli(capsys, "plan", "--study", study, "--results", in_tmp / "ro.toml" / "sub")
    assert code == 2 and "cannot write the plan" in err and "--results" in err


def test_container_and_a_hostile_results_dir_reach_the_job_quoted(slurm_cluster, in_tmp, capsys, monkeypatch):
    """Greene's `singularity exec --nv --overlay X:ro SIF /bin/bash -c "source ENV; python ..."`,
    through a stand-in singularity, with a results dir full of shell syntax."""
    overlay, env_script, record = in_tmp / "overlay.ext3", in_tmp / "env.sh", in_tmp / "singularity-args"
    overlay.write_text("")
    env_script.write_text(f'echo sourced > "{in_tmp}/env-sourced"\n')
    container = (f'image = "/scratch/work/public/cuda.sif"\noverlay = "{overlay}"\nenv_script = "{env_script}"\n'
                 f'python = "{sys.executable}"')
    study = study_file(in_tmp, "box", container=container)
    results = in_tmp / 'runs; touch PWNED; "$(touch PWNED2)"'
    monkeypatch.setenv("PATH", f"{FAKES}:{os.environ['PATH']}")
    monkeypatch.setenv("ORCH_FAKE_SINGULARITY_LOG", str(record))
    assert main(["plan", "--study", study, "--results", str(results)]) == 0
    code, out, _ = cli(capsys, "submit", "--study", study, "--results", results, "--wait", "--interval", "1")
    assert code == 0, out
    args = record.read_text().splitlines()
    assert args[:5] == ["exec", "--nv", "--overlay", f"{overlay}:ro", "/scratch/work/public/cuda.sif"]
    assert args[5:7] == ["/bin/bash", "-c"] and args[7].startswith(f"source {env_script}; ")
    assert (in_tmp / "env-sourced").is_file()
    assert not list(in_tmp.rglob("PWNED*")), "a path reached a shell unquoted"
    assert len([p for p in results.glob("*.json") if p.name != "plan.json"]) == 1  # the result is there


def test_a_failure_says_why_logs_show_it_and_retry_failed_requeues_only_it(slurm_cluster, in_tmp, capsys):
    grids = ('[[grid]]\nengine = "single"\n\n[[grid]]\nengine = "single"\ndataset = "cifar10"\n'
             'train_images = 32\n')  # no CIFAR-10 in data/: fails at once with a Python error
    study = study_file(in_tmp, "mixed", grids=grids)
    assert main(["plan", "--study", study]) == 0
    code, out, _ = cli(capsys, "submit", "--study", study)
    assert code == 0 and "submitted 2 cell(s)" in out
    ok_cell, bad_cell = (c["cell_id"] for c in cell_states(capsys, study))

    code, out, _ = cli(capsys, "logs", "--study", study, ok_cell, "-f", "--interval", "1")
    assert code == 0 and "epoch 1/1" in out and f"({ok_cell}): done" in out
    code, out, _ = cli(capsys, "submit", "--study", study, "--wait", "--interval", "1")
    assert code == 1 and "submitted 0 cell(s)" in out
    cells = {c["cell_id"]: c for c in cell_states(capsys, study)}
    assert cells[ok_cell]["state"] == "done"
    assert cells[bad_cell]["state"] == "failed" and cells[bad_cell]["detail"].startswith("FileNotFoundError: ")
    code, out, _ = cli(capsys, "logs", "--study", study, bad_cell, "-n", "0")
    assert code == 0 and "Traceback" in out and "FileNotFoundError" in out

    code, out, _ = cli(capsys, "submit", "--study", study)
    assert code == 0 and "submitted 0 cell(s)" in out and "1 cell(s) ended failed" in out and "--retry-failed" in out
    first_job = cells[bad_cell]["job_id"]
    code, out, _ = cli(capsys, "submit", "--study", study, "--retry-failed", "--time-min", "7")
    assert code == 0 and "submitted 1 cell(s)" in out
    subs = registry.load(in_tmp / "runs" / "mixed").latest
    assert subs[bad_cell].job_id != first_job and subs[ok_cell].job_id == cells[ok_cell]["job_id"]
    limit = subprocess.run(["squeue", "-h", "-t", "all", "-j", subs[bad_cell].job_id, "-o", "%l"],
                           capture_output=True, text=True).stdout.strip()
    assert limit == "7:00"
    assert cli(capsys, "cancel", "--study", study, bad_cell)[0] == 0
