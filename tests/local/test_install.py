"""The package as a user gets it: a wheel built from the tracked layout, installed (not editable)
into a fresh venv, run from a directory outside the repository. (~30 s)"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SOURCES = ("orchestrator", "jobs", "collect", "results_format", "templates")
PROJECT_FILES = ("setup.cfg", "pyproject.toml", "README.md")


def run(command: list, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # only what was installed
    done = subprocess.run([str(c) for c in command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"{command}\n{done.stdout}\n{done.stderr}"
    return done


def lends_dependencies(python: Path) -> None:
    """The new venv finds torch and the rest where the interpreter running the tests does (a venv, a
    conda env or the system's), after its own: a .pth of those site-packages dirs. Not
    --system-site-packages: inside a venv that is the base interpreter's, which may have none of them.
    A .pth line adds a dir without reading the .pth files in it, so this checkout's editable install
    stays out and the wheel is what runs."""
    own = run([python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"]).stdout.strip()
    lent = [p for p in sys.path if p.rstrip("/").endswith(("site-packages", "dist-packages")) and Path(p).is_dir()]
    (Path(own) / "tests-running-interpreter.pth").write_text("".join(f"{p}\n" for p in lent))


def test_a_wheel_in_a_fresh_venv_renders_sbatch_scripts_and_the_report(tmp_path):
    pytest.importorskip("setuptools", reason="building the wheel needs setuptools")
    src = tmp_path / "src"
    for name in SOURCES:
        shutil.copytree(REPO / name, src / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in PROJECT_FILES:
        shutil.copy(REPO / name, src / name)
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
         "-w", tmp_path / "dist", src])
    wheel = next((tmp_path / "dist").glob("orchestrator-*.whl"))
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    python = venv / "bin" / "python"
    lends_dependencies(python)
    run([python, "-m", "pip", "install", "--no-deps", "--no-index", "--force-reinstall", wheel])

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    where = run([python, "-c", "import orchestrator, templates; print(orchestrator.__file__, templates.__file__)"],
                cwd=elsewhere).stdout.split()
    assert all(path.startswith(str(venv)) for path in where), where
    plan = run([python, "-m", "orchestrator", "plan", "--sbatch"], cwd=elsewhere)
    assert "#SBATCH --array=0-3" in plan.stdout and "submitted.pkl" in plan.stdout
    assert (elsewhere / "runs" / "quick" / "sbatch" / "n1-g1-t1.sh").is_file()
    one_result(elsewhere / "runs" / "quick")  # collect before any result says only that nothing ran yet
    run([python, "-m", "orchestrator", "collect", "--report"], cwd=elsewhere)
    assert "<html" in (elsewhere / "runs" / "quick" / "report.html").read_text()


def one_result(results_dir: Path) -> None:
    """A result of the plan's first training cell, as its job would write it."""
    from jobs.core.result import write_result
    from orchestrator.plan.plan import read_plan
    from tests.factories import train_result

    write_result(results_dir, train_result(next(c for c in read_plan(results_dir).cells if c.kind == "train")))
