"""The mixed results dir (tests/collect/dirs.py, mixed_results), written once: each test gets its
own copy (mixed_dir) to read, collect into or damage; module fixtures that only read may load
mixed_template, which nothing writes into."""
from __future__ import annotations

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
