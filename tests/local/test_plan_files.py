"""What `plan` writes in the results dir: all of it or none of it, and nothing it did not write
is ever deleted or overwritten."""
from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest

from orchestrator.plan import plan as plan_module
from tests.helpers import TINY_STUDY, cli, unwritable, write_study

ONE_ARRAY = TINY_STUDY.read_text().split("[[grid]]")[0] + '[[grid]]\nengine = "single"\n'


def snapshot(results: Path) -> dict[str, str]:
    return {str(p.relative_to(results)): p.read_text() for p in sorted(results.rglob("*")) if p.is_file()}


def test_replanning_replaces_the_plan_its_scripts_and_its_study_together(in_tmp, capsys):
    results = in_tmp / "runs" / "tiny"
    assert cli(capsys, "plan", "--study", TINY_STUDY)[0] == 0
    assert len(list((results / "sbatch").glob("*.sh"))) == 4
    smaller = write_study(in_tmp, ONE_ARRAY, "tiny")
    assert cli(capsys, "plan", "--study", smaller)[0] == 0
    assert [p.name for p in (results / "sbatch").iterdir()] == ["n1-g1-t1.sh"]
    assert (results / "study.toml").read_text() == ONE_ARRAY
    assert len(json.loads((results / "plan.json").read_text())["cells"]["own"]) == 1
    assert not list(results.glob(".plan-*")), "the staging dir is removed"


def test_a_full_disk_while_replanning_leaves_the_old_plan_whole(in_tmp, capsys, monkeypatch):
    results = in_tmp / "runs" / "tiny"
    assert cli(capsys, "plan", "--study", TINY_STUDY)[0] == 0
    before = snapshot(results)
    smaller = write_study(in_tmp, ONE_ARRAY, "tiny")

    def full_disk(path, data):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(plan_module, "write_bytes_atomic", full_disk)  # plan.json: the last file written
    code, _, err = cli(capsys, "plan", "--study", smaller)
    assert code == 2 and "No space left on device" in err and len(err.strip().splitlines()) == 1
    assert snapshot(results) == before
    assert not list(results.glob(".plan-*"))


@pytest.mark.parametrize("theirs", ["study.toml", "sbatch/run.sh"])
def test_plan_never_overwrites_files_it_did_not_write(in_tmp, capsys, theirs):
    (in_tmp / "mine" / theirs).parent.mkdir(parents=True, exist_ok=True)
    (in_tmp / "mine" / theirs).write_text("the user's own")
    code, _, err = cli(capsys, "plan", "--study", TINY_STUDY, "--results", in_tmp / "mine")
    assert code == 2 and "did not write" in err and "--results" in err, err
    assert (in_tmp / "mine" / theirs).read_text() == "the user's own"
    assert not (in_tmp / "mine" / "plan.json").exists()


def test_plan_keeps_a_file_of_the_users_in_its_sbatch_dir(in_tmp, capsys):
    results = in_tmp / "runs" / "tiny"
    assert cli(capsys, "plan", "--study", TINY_STUDY)[0] == 0
    (results / "sbatch" / "notes.txt").write_text("the user's own")
    code, _, err = cli(capsys, "plan", "--study", TINY_STUDY)
    assert code == 2 and "notes.txt" in err and "did not write" in err, err
    assert (results / "sbatch" / "notes.txt").read_text() == "the user's own"


def test_replanning_in_a_read_only_results_dir_says_so(in_tmp, capsys):
    results = in_tmp / "runs" / "tiny"
    assert cli(capsys, "plan", "--study", TINY_STUDY)[0] == 0
    before = snapshot(results)
    with unwritable(results):
        code, _, err = cli(capsys, "plan", "--study", TINY_STUDY)
    assert code == 2 and "File exists" not in err and ("Permission denied" in err or "not permitted" in err), err
    assert err.startswith(f"error: cannot write the plan in {results}")
    assert snapshot(results) == before


def test_a_rename_that_fails_half_way_puts_the_old_plan_back(in_tmp, capsys, monkeypatch):
    import os

    results = in_tmp / "runs" / "tiny"
    assert cli(capsys, "plan", "--study", TINY_STUDY)[0] == 0
    before = snapshot(results)
    smaller = write_study(in_tmp, ONE_ARRAY, "tiny")
    rename, calls = os.rename, []

    def failing(src, dst):  # the new plan.json's rename fails, once
        if Path(dst) == results / "plan.json" and Path(src).parent.name.startswith(".plan-") and not calls:
            calls.append(src)
            raise OSError(errno.EIO, "Input/output error")
        rename(src, dst)

    monkeypatch.setattr(plan_module.os, "rename", failing)
    code, _, err = cli(capsys, "plan", "--study", smaller)
    assert code == 2 and "Input/output error" in err and calls
    assert snapshot(results) == before


@pytest.mark.parametrize("kind", ["file", "dangling link"])
def test_a_results_path_that_is_no_directory_says_so(in_tmp, capsys, kind):
    path = in_tmp / "taken"
    if kind == "file":
        path.write_text("mine")
    else:
        path.symlink_to(in_tmp / "gone")
    code, _, err = cli(capsys, "plan", "--study", TINY_STUDY, "--results", path)
    assert code == 2 and "is not a directory" in err and len(err.strip().splitlines()) == 1, err
