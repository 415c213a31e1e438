"""The mixed results dir (tests/collect/dirs.py, mixed_results), written once: each test gets its
own copy (mixed_dir) to read, collect into or damage; module fixtures that only read may load
mixed_template, which nothing writes into."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.collect.dirs import write_mixed


@pytest.fixture(scope="session")
def mixed_template(tmp_path_factory) -> Path:
    return write_mixed(tmp_path_factory.mktemp("mixed"))


@pytest.fixture
def mixed_dir(mixed_template, tmp_path) -> Path:
    return Path(shutil.copytree(mixed_template, tmp_path / "mixed"))


@pytest.fixture(autouse=True)
def scheduler_that_knows_nothing(tmp_path_factory, monkeypatch):
    """collect asks the scheduler what the study's jobs held (squeue, sacct); these dirs' job ids
    were made up, so the scheduler here answers with nothing, whatever SLURM this machine runs
    (tests/slurm measure against the real one)."""
    bin_dir = tmp_path_factory.mktemp("no-slurm")
    for name in ("squeue", "sacct"):
        tool = bin_dir / name
        tool.write_text("#!/bin/sh\nexit 0\n")
        tool.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
