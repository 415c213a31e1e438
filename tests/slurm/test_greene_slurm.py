"""Greene rehearsed on the test cluster: the README's path from a login node without torch. Its venv
(tests/login_venv.py) plans the quick study with the greene profile, submits it to SLURM, watches,
reads a log, collects and cancels; every task runs through the profile's container command, which
the stand-in singularity (tests/cluster/singularity) checks against the README's before it runs the
cell in the jobs' environment: the interpreter running these tests, with torch. (~3 min)"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.login_venv import REPO, run

pytestmark = pytest.mark.slurm


def jobs_environment(ext3: Path) -> None:
    """The overlay's /ext3 as the stand-in sees it: env.sh puts the jobs' Python first on the PATH,
    as the one docs/greene/overlay-env.sh writes puts /ext3/miniforge3/bin, and this checkout on
    its path, as `pip install -e .[jobs]` into the overlay does."""
    (ext3 / "bin").mkdir(parents=True)
    (ext3 / "bin" / "python").symlink_to(sys.executable)
    (ext3 / "env.sh").write_text(f'export PATH="{ext3 / "bin"}:$PATH" PYTHONPATH="{REPO}"\n')


def test_greene_from_a_login_venv_without_torch_through_the_container(slurm_cluster, login_venv, tmp_path):
    scratch, ext3, profiles, calls = tmp_path / "scratch", tmp_path / "ext3", tmp_path / "profiles", tmp_path / "calls"
    scratch.mkdir()
    overlay = scratch / "overlay-25GB-500K.ext3"  # the README's name; the stand-in mounts nothing
    overlay.write_text("")
    jobs_environment(ext3)
    profiles.mkdir()
    # the site file a Greene user writes, here for the test nodes: 16 CPUs and the host's memory
    (profiles / "greene.toml").write_text(f'[cluster]\nmem_gb = 2\n[container]\noverlay = "{overlay}"\n')
    env = login_venv.env(ORCHESTRATOR_PROFILES=str(profiles), ORCH_GREENE_README=str(REPO / "README.md"),
                         ORCH_FAKE_EXT3=str(ext3), ORCH_FAKE_SINGULARITY_LOG=str(calls))
    env["PATH"] = f"{login_venv.python.parent}:{REPO / 'tests' / 'cluster'}:{env['PATH']}"
    home = tmp_path / "hpml"
    home.mkdir()

    def verb(*args: str) -> str:
        return run([login_venv.python, "-m", "orchestrator", *args], cwd=home, env=env, timeout=600).stdout

    assert "singularity" in verb("plan", "--profile", "greene", "--sbatch")
    assert "submitted 12 cell(s)" in verb("submit", "--executor", "slurm")
    verb("status", "--watch", "--interval", "2")
    cells = json.loads(verb("status", "--json"))["cells"]
    assert [c["state"] for c in cells] == ["done"] * 12, cells
    assert "epoch 2/2" in verb("logs", cells[0]["cell_id"])
    assert "A.Q1" in verb("collect")
    assert (home / "runs" / "quick" / "answers.md").is_file()
    assert verb("cancel", "--all").startswith("cancelled ")  # a job may still be ending: its cell is done

    through_container = [json.loads(line) for line in calls.read_text().splitlines()]
    assert len(through_container) >= 12  # a task per cell, one call per rank of a multi-task cell
    assert all(call[:3] == ["exec", "--nv", "--overlay"] for call in through_container)
    torch_free = subprocess.run([login_venv.python, "-c", "import torch"], env=env, capture_output=True)
    assert torch_free.returncode == 1, "the login venv must not have torch"
