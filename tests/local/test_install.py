"""The package as a login node gets it: `pip install .` (no torch) from a wheel of the tracked layout,
in a fresh venv (tests/login_venv.py), run from a directory outside the repository. The jobs'
environment (`.[jobs]`, torch) is the one running these tests; tests/slurm/test_greene_slurm.py
runs cells from the login venv through it."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.login_venv import run


def verb(login_venv, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run([login_venv.python, "-m", "orchestrator", *args], cwd=cwd, env=login_venv.env())


def test_the_login_install_brings_no_torch(login_venv, tmp_path):
    assert not {"torch", "torchvision"} & set(login_venv.lent), login_venv.lent
    done = subprocess.run([login_venv.python, "-c", "import torch"], env=login_venv.env(), cwd=tmp_path,
                          capture_output=True, text=True)
    assert done.returncode == 1 and "No module named 'torch'" in done.stderr


def test_a_wheel_renders_sbatch_scripts_and_the_report_from_its_own_files(login_venv, tmp_path):
    where = run([login_venv.python, "-c", "import orchestrator, templates; print(orchestrator.__file__, "
                 "templates.__file__)"], cwd=tmp_path, env=login_venv.env()).stdout.split()
    assert all(path.startswith(str(login_venv.python.parents[1])) for path in where), where
    plan = verb(login_venv, tmp_path, "plan", "--sbatch")
    assert "#SBATCH --array=0-3" in plan.stdout and "submitted.pkl" in plan.stdout
    assert (tmp_path / "runs" / "quick" / "sbatch" / "n1-g1-t1.sh").is_file()
    one_result(tmp_path / "runs" / "quick")  # collect before any result says only that nothing ran yet
    verb(login_venv, tmp_path, "collect", "--report")
    assert "<html" in (tmp_path / "runs" / "quick" / "report.html").read_text()


def test_every_verb_runs_without_torch(login_venv, tmp_path):
    """plan, status, logs, cancel and collect on a planned study; submit with its jobs:
    tests/slurm/test_greene_slurm.py."""
    plan = verb(login_venv, tmp_path, "plan", "--study", "hw5", "--profile", "greene")
    assert "plan: " in plan.stdout
    status = json.loads(verb(login_venv, tmp_path, "status", "--study", "hw5", "--json").stdout)
    assert list(status["counts"]) == ["not submitted"]
    cell_id = status["cells"][0]["cell_id"]
    logs = subprocess.run([login_venv.python, "-m", "orchestrator", "logs", "--study", "hw5", cell_id],
                          cwd=tmp_path, env=login_venv.env(), capture_output=True, text=True)
    assert (logs.returncode, logs.stderr) == (2, f"error: cell {cell_id} was never submitted: no logs; "
                                              "`submit` queues it\n")
    verb(login_venv, tmp_path, "cancel", "--study", "hw5", "--all")
    one_result(tmp_path / "runs" / "hw5")
    verb(login_venv, tmp_path, "collect", "--study", "hw5", "--report")
    assert (tmp_path / "runs" / "hw5" / "report.html").is_file()


def one_result(results_dir: Path) -> None:
    """A result of the plan's first training cell, as its job would write it."""
    from jobs.core.result import write_result
    from orchestrator.plan.plan import read_plan
    from tests.factories import train_result

    write_result(results_dir, train_result(next(c for c in read_plan(results_dir).cells if c.kind == "train")))
