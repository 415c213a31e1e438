"""A user's mistake gets one clear message naming the field or the fix, exit status 2,
no traceback, and nothing submitted."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from orchestrator.cli import main
from tests.helpers import TINY_STUDY, cli, write_study

GOOD = TINY_STUDY.read_text()


@pytest.mark.parametrize("edit, expected", [
    (lambda s: s.replace("[cluster]", "[cluster]\ngpu_count = 4"), "unknown key(s) ['gpu_count'] in [cluster]"),
    (lambda s: s.replace('engine = "single"', 'engine = "single"\nbatchsize = 3'), "unknown key(s) ['batchsize'] in grid[0]"),
    (lambda s: s.replace("batch_per_gpu = 16", 'batch_per_gpu = "16"'), "batch_per_gpu must be of type int"),
    (lambda s: s.replace("batch_per_gpu = 16", "batch_per_gpu = 0"), "batch_per_gpu must be > 0"),
    (lambda s: s.replace('engine = "single"', 'engine = "horovod"'), "engine must be one of ['single', 'dp', 'ddp']"),
    (lambda s: s.replace("gpus_per_node = 2\n", "gpus_per_node = 8\n", 1), "gpus_per_node = 8, but a node has 4"),
    (lambda s: s.replace("time_min = 10", "time_min = 10\npartition = \"; rm -rf ~\""), "holds characters SLURM names never use"),
    (lambda s: s + "\n[[grid]\n", "not valid TOML"),
    (lambda s: s.replace('name = "tiny"', 'name = "tiny"\nkind = ["ptq"]'), "kind must be one of ['train', 'ptq'"),
    (lambda s: s.replace("batch_per_gpu = 16\n", ""), "grid[0]: batch_per_gpu is required"),
    (lambda s: s.replace('engine = "single"', 'engine = "single"\nlr = []'), "grid[0].lr is an empty list"),
    (lambda s: s.replace('engine = "single"', 'engine = "single"\nbatch_per_gpu = [128, 128]'),
     "grid[0].batch_per_gpu lists 128 twice"),
    (lambda s: s.replace('engine = ["dp", "ddp"]', 'engine = ["dp", "ddp", "dp"]'), "grid[1].engine lists 'dp' twice"),
    (lambda s: s.replace("batch_per_gpu = 16", "batch_per_gpu = []"), "[defaults].batch_per_gpu is an empty list"),
    (lambda s: s.replace("batch_per_gpu = 16", "batch_per_gpu = [8, 8]"), "[defaults].batch_per_gpu lists 8 twice"),
    # issue 45 item 8: numbers with no ceiling (10^7 cells took plan past 120 s and 3.3 GB)
    (lambda s: s.replace("time_min = 10", "time_min = 99999999999"), "[cluster] time_min must be at most 527040"),
    (lambda s: "max_cells = 10000000\n" + s, "max_cells must be an int from 1 to 200,000, got 10000000"),
])
def test_bad_study_file_is_one_line_exit_2_and_nothing_planned(in_tmp, capsys, edit, expected):
    study = write_study(in_tmp, edit(GOOD))
    code, _, err = cli(capsys, "plan", "--study", study)
    assert code == 2
    assert expected in err
    assert err.startswith("error: ") and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert not (in_tmp / "runs").exists()


def test_unknown_study_name_lists_the_shipped_ones(in_tmp, capsys):
    code, _, err = cli(capsys, "plan", "--study", "hw6")
    assert code == 2
    assert "unknown study 'hw6'" in err and "hw5" in err and "quick" in err


def test_submit_before_plan_says_run_plan_and_submits_nothing(in_tmp, capsys):
    code, _, err = cli(capsys, "submit", "--study", str(TINY_STUDY))
    assert code == 2
    assert "run `python -m orchestrator plan` first" in err
    assert not (in_tmp / "runs" / "tiny" / "registry.jsonl").exists()


def test_status_and_collect_need_a_plan_too(in_tmp, capsys):
    assert cli(capsys, "status")[0] == 2
    code, _, err = cli(capsys, "collect")
    assert code == 2 and "run `plan` and `submit` first" in err


def test_a_plan_of_another_study_is_not_used(in_tmp, capsys):
    assert main(["plan", "--study", "quick", "--results", "runs/x"]) == 0
    code, _, err = cli(capsys, "submit", "--study", str(TINY_STUDY), "--results", "runs/x")
    assert code == 2 and "holds a plan of study 'quick'" in err


def test_a_study_named_dotdot_is_refused_and_the_current_dir_left_alone(in_tmp, capsys):
    (in_tmp / "sbatch").mkdir()
    (in_tmp / "sbatch" / "mine.sh").write_text("keep me")
    text = GOOD.replace('name = "tiny"', 'name = ".."')
    write_study(in_tmp, text)
    for verb in ("plan", "status"):
        code, _, err = cli(capsys, verb, "--study", "study.toml")
        assert code == 2 and "name must be" in err and len(err.strip().splitlines()) == 1, err
    assert (in_tmp / "sbatch" / "mine.sh").read_text() == "keep me"
    assert (in_tmp / "study.toml").read_text() == text and not (in_tmp / "plan.json").exists()


def test_a_study_file_that_is_not_utf8_is_one_line_exit_2(in_tmp, capsys):
    (in_tmp / "latin1.toml").write_bytes(GOOD.replace('name = "tiny"', 'name = "caf\xe9"').encode("latin-1"))
    for verb in ("plan", "status"):
        code, _, err = cli(capsys, verb, "--study", "latin1.toml")
        assert code == 2 and "not UTF-8 text" in err and "Traceback" not in err, err


@pytest.mark.parametrize("results", ["runs\\tiny", "runs/50%", "runs/a\nb"])
def test_a_results_path_slurm_cannot_read_back_is_refused_at_plan(in_tmp, capsys, results):
    code, _, err = cli(capsys, "plan", "--study", str(TINY_STUDY), "--results", results)
    assert code == 2 and err.startswith("error: --results") and len(err.strip().splitlines()) == 1, err
    assert not list(in_tmp.iterdir())


@pytest.mark.parametrize("interval", ["nan", "inf", "-1", "0", "soon"])
def test_a_poll_interval_that_is_no_positive_number_is_refused(in_tmp, capsys, interval):
    with pytest.raises(SystemExit) as exit_:
        main(["status", "--watch", "--interval", interval])
    assert exit_.value.code == 2
    assert "--interval: must be a number of seconds > 0" in capsys.readouterr().err


def _first(plan: dict, key: str):
    return plan[key][0]


@pytest.mark.parametrize("edit, expected", [
    (lambda p: _first(p, "arrays")["cell_ids"].pop(), "is in no array"),
    (lambda p: p.update(cells="x"), "cells must be an object of ids, shared and own"),
    (lambda p: p["cells"]["own"].append(None), "cells.own must be a list of objects"),
    (lambda p: p["cells"]["own"].append(p["cells"]["own"][0]), "is in cells twice"),
    (lambda p: p["cells"]["own"][0].update(batch_per_gpu=64), "which is not in cells"),  # its id no longer its fields'
    (lambda p: _first(p, "arrays")["cell_ids"].append("0123456789ab"), "not in cells"),
    (lambda p: _first(p, "arrays")["cell_ids"].append(p["arrays"][1]["cell_ids"][0]), "is in two arrays"),
    (lambda p: _first(p, "arrays").update(cell_ids="abc"), "cell_ids must be a list of cell ids"),
    (lambda p: p.update(arrays=[None]), "arrays must be a list of objects"),
])
def test_a_hand_edited_plan_is_one_line_naming_the_file_exit_2(in_tmp, capsys, edit, expected):
    assert main(["plan", "--study", str(TINY_STUDY)]) == 0
    path = in_tmp / "runs" / "tiny" / "plan.json"
    plan = json.loads(path.read_text())
    edit(plan)
    path.write_text(json.dumps(plan))
    for verb in (["status"], ["submit", "--executor", "local"]):
        code, _, err = cli(capsys, *verb, "--study", str(TINY_STUDY))
        assert code == 2, (verb, err)
        assert err.startswith("error: plan file ") and str(Path("runs/tiny/plan.json")) in err and expected in err, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (in_tmp / "runs" / "tiny" / "registry.jsonl").exists()


@pytest.mark.parametrize("minutes", ["99999999999999999999", "527041", "0"])
def test_a_time_limit_past_a_year_is_refused(in_tmp, capsys, minutes):
    """Issue 45 item 8: SLURM made 10^20 minutes UNLIMITED, and the budget charged 3.3e18 GPU-h."""
    study = write_study(in_tmp, GOOD)
    assert cli(capsys, "plan", "--study", study)[0] == 0
    code, _, err = cli(capsys, "submit", "--study", study, "--executor", "local", "--time-min", minutes)
    assert code == 2 and "--time-min must be" in err and "at most 527040" in err and len(err.splitlines()) == 1
