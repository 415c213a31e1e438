"""What many test modules share: the tests' study files, the CLI run in this process, one cell's
job run as `python -m jobs`, a machine with one GPU, and a directory made unwritable.
(Fixtures live in conftest.py; results and results dirs in factories.py.)"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from jobs.core.cell import StudyCell
from jobs.core.layout import result_path
from orchestrator.cli import main

TESTS = Path(__file__).parent
STUDIES = TESTS / "studies"
TINY_STUDY = STUDIES / "tiny.toml"  # every engine and shape: 1 GPU, DP, DDP, 2 nodes (4 cells)
TINY_LOCAL = STUDIES / "tiny-local.toml"  # a 1-GPU cell and a 2-rank DDP cell
PTQ_TINY = STUDIES / "ptq-tiny.toml"
ALLREDUCE_TINY = STUDIES / "allreduce-tiny.toml"
TINY_JOB = dict(model="tiny", dataset="synthetic", train_images=48, loader_workers=1, epochs=2)  # a training cell's


def write_study(where: Path, text: str, name: str = "study") -> Path:
    """The study file `where`/`name`.toml holding `text`."""
    path = Path(where) / f"{name}.toml"
    path.write_text(text)
    return path


def cli(capsys, *argv) -> tuple[int, str, str]:
    """`python -m orchestrator ARGV` in this process: its exit code, and what it printed (only it)."""
    capsys.readouterr()
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys, *argv) -> dict:
    """The JSON a verb prints with --json (which must exit 0)."""
    code, out, err = cli(capsys, *argv, "--json")
    assert code == 0, err
    return json.loads(out)


def cell_states(capsys, study) -> list[dict]:
    """`status --json`'s cells, in plan order."""
    return cli_json(capsys, "status", "--study", study)["cells"]


@dataclass(frozen=True)
class JobRun:
    code: int
    stdout: str
    stderr: str
    path: Path  # where the cell's result is written


def job_command(tmp_path: Path, cell: StudyCell) -> list[str]:
    """`python -m jobs` for `cell` (written to tmp_path/cell.json): results in tmp_path/results,
    data in tmp_path/data."""
    cell_file = tmp_path / "cell.json"
    cell_file.write_text(json.dumps(cell.to_dict()))
    return [sys.executable, "-m", "jobs", "--cell", str(cell_file), "--out", str(tmp_path / "results"),
            "--data", str(tmp_path / "data")]


def run_job(tmp_path: Path, cell: StudyCell, env: dict | None = None, timeout: float = 180) -> JobRun:
    """The cell's job run to its end, as a user runs it off-cluster; a traceback only with a failure."""
    proc = subprocess.run(job_command(tmp_path, cell), env=dict(os.environ, **(env or {})), timeout=timeout,
                          capture_output=True, text=True)
    assert "Traceback" not in proc.stderr or proc.returncode != 0, proc.stderr
    return JobRun(proc.returncode, proc.stdout, proc.stderr, result_path(tmp_path / "results", cell.cell_id))


def one_gpu_machine(tmp_path: Path, monkeypatch, gpus: int = 1) -> None:
    """nvidia-smi here lists one GPU (or `gpus`); torch still runs on the CPU."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    smi = bin_dir / "nvidia-smi"
    listed = "".join(f"echo 'GPU {i}: NVIDIA H200 (UUID: GPU-{i})'\n" for i in range(gpus))
    smi.write_text(f"#!/bin/sh\n{listed}")
    smi.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)


class unwritable:
    """chmod a-w, or (as root, whom modes do not stop) chattr +i; skips where neither works."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self):
        self.path.chmod(0o555)
        self.immutable = os.geteuid() == 0
        if self.immutable and subprocess.run(["chattr", "+i", str(self.path)], capture_output=True).returncode != 0:
            self.path.chmod(0o755)
            pytest.skip("cannot make a directory unwritable for root here (no chattr +i)")
        return self

    def __exit__(self, *exc) -> None:
        if self.immutable:
            subprocess.run(["chattr", "-i", str(self.path)], check=True)
        self.path.chmod(0o755)


def assert_plan_refuses(where: Path, capsys, text: str, expected: str) -> None:
    """`plan` of this study text: exit 2, one `error:` line holding `expected`, nothing planned."""
    study = write_study(where, text, "bad")
    assert main(["plan", "--study", str(study)]) == 2
    err = capsys.readouterr().err
    assert expected in err and err.startswith("error: ") and len(err.strip().splitlines()) == 1, err
    assert not (where / "runs").exists()


def tiny_slurm_study(name: str, batches: str = "[8, 16]", grid: str = "", **defaults: object) -> str:
    """A study of tiny 1-GPU cells (one a batch: 8 and 16) that ends in seconds on the test cluster;
    `grid` in place of the batches, and `defaults` added to (or replacing) its [defaults]."""
    values = {"model": '"tiny"', "dataset": '"synthetic"', "train_images": 32, "loader_workers": 0,
              "engine": '"single"', **defaults}
    lines = "\n".join(f"{key} = {value}" for key, value in values.items())
    return f"""name = "{name}"
[cluster]
time_min = 5
cpus_per_task = 1
[defaults]
{lines}
[[grid]]
{grid or f"batch_per_gpu = {batches}"}
"""
