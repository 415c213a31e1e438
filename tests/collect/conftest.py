"""The mixed results dir (tests/collect/factory.py, mixed_results), written once per test module:
tests that change a results dir work on a copy (factory.copy_of) or write their own (factory.write_dir)."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.collect.factory import write_mixed


@pytest.fixture(scope="module")
def mixed_dir(tmp_path_factory) -> Path:
    return write_mixed(tmp_path_factory.mktemp("mixed"))
