"""The PTQ study through the same verbs as training: plan -> submit -> status, on this machine
and on the real local SLURM; its mistakes exit 2 at plan time."""
from __future__ import annotations

import pytest

from jobs.core.result import read_result
from orchestrator.cli import main
from tests.helpers import assert_plan_refuses, PTQ_TINY as STUDY, cell_states, write_study

PTQ_TINY = str(STUDY)
NOTEBOOK = ["Net float", "Net W8", "Net W8A8", "NetWithBias float", "NetWithBias W8 float-bias", "NetWithBias W8A8B32"]


def check_results(results, cells) -> None:
    for c in cells:
        result = read_result(results / f"{c['cell_id']}.json")
        assert result.status == "ok" and result.cell["kind"] == "ptq"
        variants = result.to_dict()["ptq"]["outcome"]["variants"]
        assert [v["name"] for v in variants][:6] == NOTEBOOK
        assert len(variants) == 6 + 2 + 2 * 2  # + weights 8, 2 bits; + activations 8, 2 bits x 2 calibrations
        agreement = [v["integer_agreement"] for v in variants if v["integer_agreement"]]
        assert agreement and all(a["prediction_mismatches"] == 0 and a["images"] == 200 for a in agreement)
        assert [t["model"] for t in result.to_dict()["ptq"]["training"]] == ["Net", "NetWithBias"]


def test_plan_submit_status_locally(in_tmp, capsys):
    assert main(["plan", "--study", PTQ_TINY]) == 0
    assert main(["submit", "--study", PTQ_TINY, "--executor", "local", "--wait", "--interval", "1"]) == 0
    cells = cell_states(capsys, PTQ_TINY)
    assert [c["state"] for c in cells] == ["done", "done"]
    assert [c["label"] for c in cells] == ["ptq-cpu-synthetic600-s0", "ptq-cpu-synthetic600-s0-r1"]
    check_results(in_tmp / "runs" / "ptq-tiny", cells)

    assert main(["submit", "--study", PTQ_TINY, "--executor", "local"]) == 0
    assert "submitted 0 cell(s)" in capsys.readouterr().out


@pytest.mark.slurm
def test_plan_submit_status_on_slurm(slurm_cluster, in_tmp, capsys):
    assert main(["plan", "--study", PTQ_TINY]) == 0
    assert main(["submit", "--study", PTQ_TINY, "--executor", "slurm", "--wait", "--interval", "1"]) == 0
    cells = cell_states(capsys, PTQ_TINY)
    assert [c["state"] for c in cells] == ["done", "done"]
    assert all("_" in c["job_id"] for c in cells), "the cells ran as tasks of one job array"
    check_results(in_tmp / "runs" / "ptq-tiny", cells)


def test_a_rerun_cell_reuses_its_trained_networks(in_tmp, capsys):
    text = STUDY.read_text().replace("repeats = 2", "repeats = 1")
    first = write_study(in_tmp, text, "a")
    second = write_study(in_tmp, text.replace("weight_bits = [8, 2]", "weight_bits = [4]"), "b")
    for study in (first, second):
        assert main(["plan", "--study", str(study), "--results", "runs/shared"]) == 0
        assert main(["submit", "--study", str(study), "--results", "runs/shared", "--executor", "local",
                     "--wait", "--interval", "1"]) == 0
    results = sorted((in_tmp / "runs" / "shared").glob("*.json"), key=lambda p: p.stat().st_mtime)
    trained = [[t["reused"] for t in read_result(p).to_dict()["ptq"]["training"]] for p in results if p.name != "plan.json"]
    assert trained == [[False, False], [True, True]]


@pytest.mark.parametrize("edit, expected", [
    (lambda s: s.replace("weight_bits = [8, 2]", "weight_bits = [8, 1]"), "weight_bits must be an integer from 2 to 16"),
    (lambda s: s.replace('range_methods = ["max"]', 'range_methods = ["absmax"]'), "range_methods must be one of"),
    (lambda s: s.replace("calibration_images = [16, 200]", "calibration_images = [16, 2000]"),
     "calibration_images: 2000 images to calibrate on, but the cell trains on train_images = 600"),
    (lambda s: s.replace('range_methods = ["max"]', "range_methods = []"), "range_methods is an empty list"),
    (lambda s: s.replace("weight_bits = [8, 2]", "weight_bits = [8, 8]"), "weight_bits lists 8 twice"),
    (lambda s: s.replace('"synthetic"', '"cifar10"'), 'colour_jitter = 30 applies to dataset = "synthetic" only'),
    (lambda s: s.replace("test_images = 200", "test_images = 1000000"), "test_images must be <= 10000"),
    (lambda s: s.replace("train_images = 600", "train_images = 100000000"), "train_images must be <= 50000"),
])
def test_a_bad_ptq_study_is_one_line_exit_2_at_plan(in_tmp, capsys, edit, expected):
    assert_plan_refuses(in_tmp, capsys, edit(STUDY.read_text()), expected)
