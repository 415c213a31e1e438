"""A results dir others can write (issue 45 item 1): its jobs load their pickled calls from logs/, so
`plan` and `submit` refuse it (one line naming the dir and the fix, exit 2), or warn where the user
opts in; the dirs `plan` makes are writable by the user alone, whatever the umask."""
from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from orchestrator.plan.private_dir import ALLOW_ENV, unsafe_parts
from tests.helpers import cli, write_study

STUDY = """name = "mine"
[defaults]
model = "tiny"
dataset = "synthetic"
engine = "single"
[[grid]]
batch_per_gpu = 8
"""


@pytest.fixture
def lab_umask():
    before = os.umask(0o002)  # a lab that shares project dirs by group
    yield
    os.umask(before)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_plan_makes_the_results_dir_writable_by_you_alone(in_tmp, capsys, lab_umask):
    study = write_study(in_tmp, STUDY)
    code, _, err = cli(capsys, "plan", "--study", study, "--results", in_tmp / "runs" / "mine")
    assert code == 0 and "warning" not in err
    assert mode(in_tmp / "runs") & 0o022 == 0 and mode(in_tmp / "runs" / "mine") & 0o022 == 0
    assert mode(in_tmp / "runs" / "mine") & 0o055 == 0o055  # others may still read


@pytest.mark.parametrize("where", ["results", "logs", "pickle", "parent"])
def test_a_dir_others_can_write_is_refused_by_plan_and_submit(in_tmp, capsys, where, monkeypatch):
    study = write_study(in_tmp, STUDY)
    results = in_tmp / "lab" / "mine"
    assert cli(capsys, "plan", "--study", study, "--results", results)[0] == 0
    (results / "logs").mkdir()
    (results / "logs" / "x_0_submitted.pkl").write_bytes(b"")
    shared = {"results": results, "logs": results / "logs", "pickle": results / "logs" / "x_0_submitted.pkl",
              "parent": in_tmp / "lab"}[where]
    shared.chmod(mode(shared) | 0o020)
    for verb in ("plan", "submit"):
        code, _, err = cli(capsys, verb, "--study", study, "--results", results, "--executor", "local")
        assert code == 2 and err.count("\n") == 1, err
        assert f"{shared} is mode" in err and "chmod go-w" in err and ALLOW_ENV in err
    monkeypatch.setenv(ALLOW_ENV, "1")
    code, _, err = cli(capsys, "plan", "--study", study, "--results", results)
    assert code == 0 and err.startswith("warning:") and f"{shared} is mode" in err


def test_a_sticky_dir_like_tmp_is_safe_for_what_you_own_in_it(tmp_path):
    shared = tmp_path / "scratch"
    shared.mkdir()
    shared.chmod(0o1777)
    (shared / "mine").mkdir(mode=0o755)
    assert unsafe_parts(shared / "mine") == []
