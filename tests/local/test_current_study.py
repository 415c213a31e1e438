"""Issue 43: after `plan --study X` the other verbs act on X unless told otherwise, and say so first;
the pointer that names X is refused where someone else could have written it."""
from __future__ import annotations

import json
import os

import pytest

from orchestrator.plan.current_study import POINTER
from tests.helpers import cli, cli_json

CURRENT = "study hw5 (runs/hw5), planned "


def test_the_verbs_follow_the_last_plan_and_say_so(in_tmp, capsys):
    assert cli(capsys, "plan", "--study", "hw5")[0] == 0
    code, out, err = cli(capsys, "status", "--json")
    assert code == 0 and json.loads(out)["study"] == "hw5"
    assert err.startswith(CURRENT) and " UTC: the current study (--study or --results picks another)" in err
    assert cli(capsys, "plan")[0] == 0  # quick, now the current one
    assert cli_json(capsys, "status")["study"] == "quick"
    code, out, err = cli(capsys, "status", "--study", "hw5", "--json")  # told otherwise: no word of the current
    assert code == 0 and json.loads(out)["study"] == "hw5" and err == ""


def test_collect_before_any_result_says_what_to_run_and_writes_nothing(in_tmp, capsys):
    assert cli(capsys, "plan", "--study", "hw5")[0] == 0
    before = sorted(p.relative_to(in_tmp) for p in in_tmp.rglob("*"))
    code, out, err = cli(capsys, "collect")
    assert code == 2 and out == ""
    lines = err.splitlines()
    assert lines[0].startswith(CURRENT) and len(lines) == 2
    assert lines[1] == ("error: no results yet in runs/hw5: no cell has finished; run `python -m orchestrator submit "
                        "--study hw5` (`status` shows the cells submitted); nothing written")
    assert sorted(p.relative_to(in_tmp) for p in in_tmp.rglob("*")) == before


def test_a_plan_outside_the_root_leaves_the_current_study(in_tmp, capsys):
    assert cli(capsys, "plan", "--study", "hw5")[0] == 0
    assert cli(capsys, "plan", "--results", "elsewhere/quick")[0] == 0
    assert cli_json(capsys, "status")["study"] == "hw5"


@pytest.mark.parametrize("pointer", ["../elsewhere", "/tmp", ".", "a/b", 7])
def test_a_pointer_naming_a_dir_outside_the_root_is_refused(in_tmp, capsys, pointer):
    assert cli(capsys, "plan")[0] == 0
    (in_tmp / "runs" / POINTER).write_text(json.dumps({"study": "quick", "results": pointer, "planned_at": "x"}))
    code, out, err = cli(capsys, "status")
    assert code == 2 and err == (f"error: runs/{POINTER} names a results dir outside runs/; remove it "
                                 f"(`rm runs/{POINTER}`) and plan again, or pass --study or --results\n")


def test_a_pointer_another_user_wrote_or_a_link_is_refused(in_tmp, capsys):
    assert cli(capsys, "plan", "--study", "hw5")[0] == 0
    path = in_tmp / "runs" / POINTER
    os.replace(path, in_tmp / "theirs.json")
    path.symlink_to(in_tmp / "theirs.json")
    code, _, err = cli(capsys, "cancel", "--all")
    assert code == 2 and "is not a small regular file, not a pointer `plan` wrote" in err
    if os.geteuid() != 0:
        pytest.skip("only root can make a file another user's")
    path.unlink()
    os.replace(in_tmp / "theirs.json", path)
    os.chown(path, 4321, 4321)
    code, _, err = cli(capsys, "logs", "anything")
    assert code == 2 and err.startswith(f"error: runs/{POINTER} is another user's file") and len(err.splitlines()) == 1
    assert cli_json(capsys, "status", "--study", "hw5")["study"] == "hw5"  # told which: the pointer is not read


def test_a_pointer_plan_cannot_replace_is_a_warning_and_the_plan_stands(in_tmp, capsys):
    (in_tmp / "runs" / POINTER).mkdir(parents=True)  # not a file: rename cannot replace it
    code, out, err = cli(capsys, "plan", "--study", "hw5")
    assert code == 0 and (in_tmp / "runs" / "hw5" / "plan.json").is_file()
    assert err.startswith(f"warning: hw5 is planned but not the current study (runs/{POINTER}: ") and len(err.splitlines()) == 1
    assert err.rstrip().endswith("pass --study hw5 to the other verbs")
