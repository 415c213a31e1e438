"""Shared fixtures: the real local SLURM cluster (tests/cluster/start.sh), each test's own machine
lock dir, and an empty working directory. Helpers that are not fixtures live in helpers.py."""
from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def slurm_cluster() -> None:
    """The real SLURM started by tests/cluster/start.sh. Off CI, tests needing it skip when it
    is down; on CI (CI=true) that is a failure, since .ci/run starts it."""
    ok = shutil.which("sinfo") is not None and subprocess.run(
        ["sinfo", "-h"], capture_output=True, timeout=30).returncode == 0
    if not ok:
        message = "no SLURM: start it with `bash tests/cluster/start.sh` (as root)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(autouse=True)
def machine_lock_dir(tmp_path_factory, monkeypatch) -> None:
    """Each test's local queue locks its own folder: a test never waits on another run's cell
    (two pytest runs on one machine), nor on a study a person runs beside the tests."""
    path = tmp_path_factory.mktemp("locks")
    monkeypatch.setenv("ORCHESTRATOR_LOCK_DIR", str(path))


@pytest.fixture(autouse=True)
def seal_key_file(tmp_path_factory, monkeypatch) -> None:
    """The seals' key (results_format.sealed_json) in the run's own temp dir, not the user's config dir."""
    monkeypatch.setenv("ORCHESTRATOR_SEAL_KEY", str(tmp_path_factory.getbasetemp() / "seal.key"))


@pytest.fixture
def in_tmp(tmp_path, monkeypatch) -> Path:
    """Run in an empty directory, as a newcomer would (runs/ and data/ land here)."""
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A dir like /tmp on a login node, for tests with two users (tests/two_users.py): anyone
    may make files in it, only their owner may remove them (the sticky bit)."""
    path = Path(tempfile.mkdtemp(prefix="two-users-"))
    path.chmod(0o1777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def login_venv(tmp_path_factory):
    """A login node's venv without torch (tests/login_venv.py): built once, shared by the tests of
    the installs and the Greene rehearsal."""
    pytest.importorskip("setuptools", reason="building the wheel needs setuptools")
    from tests.login_venv import build

    return build(tmp_path_factory.mktemp("login-venv"))
