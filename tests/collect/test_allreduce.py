"""The all-reduce study's tables from result files written by hand: medians over repeats, busbw,
regimes and the two marked sizes worked by hand; a hostile findings block shown as an unreadable
cell (never a traceback, never a number); exit codes through collect's CLI."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from collect.allreduce import grids, rows, tables
from collect.load import load
from collect.view import View
from jobs.allreduce.cell import DDP_BUCKET_BYTES as BUCKET, GRADIENT_BYTES as GRADIENT, AllreduceCell
from jobs.core.bandwidth import bandwidth_gbps
from orchestrator.cli import main
from tests.collect.dirs import ONE_NODE, TWO_NODES, seconds, write_allreduce
from tests.factories import allreduce_result, write_results
from tests.helpers import cli_json


@pytest.fixture(scope="module")
def study_template(tmp_path_factory) -> Path:
    """The worked study (tests/collect/dirs.py: allreduce_results), written once; tests take
    study_dir, their own copy."""
    return write_allreduce(tmp_path_factory.mktemp("allreduce"))


@pytest.fixture
def study_dir(study_template, tmp_path) -> Path:
    return Path(shutil.copytree(study_template, tmp_path / "allreduce"))


def built(results_dir: Path) -> dict[str, pd.DataFrame]:
    return tables.build(rows.allreduce_rows(load(results_dir).of_kind("allreduce")))


def at(table: pd.DataFrame, setup: str, nbytes: int):
    return table[(table.setup == setup) & (table.bytes == nbytes)].iloc[0]


def test_medians_busbw_and_regimes_by_hand(study_dir):
    sizes = built(study_dir)["allreduce_sizes"]
    assert list(dict.fromkeys(sizes.setup)) == ["4 GPUs, nccl", "2 nodes x 2 GPUs, nccl"]
    one = sizes[sizes.setup == "4 GPUs, nccl"]
    assert list(one.bytes) == [8, 16, 32, BUCKET, GRADIENT]
    assert list(one.seconds[:3]) == pytest.approx([12e-6, 22e-6, 30e-6])
    assert (one.seconds_min.iloc[0], one.seconds_max.iloc[0]) == pytest.approx((10e-6, 14e-6))
    gradient = at(sizes, "4 GPUs, nccl", GRADIENT)
    assert (gradient.busbw_gbps, gradient.busbw_gbps_min, gradient.busbw_gbps_max) == pytest.approx((16.5, 15, 18))
    assert (gradient.algbw_gbps, gradient.repeats, gradient.peak_busbw_gbps) == (pytest.approx(11), 3, pytest.approx(16.5))
    assert at(sizes, "4 GPUs, nccl", BUCKET).share_of_peak == pytest.approx(15 / 16.5)
    assert list(one.latency_bound) == [True, True, True, False, False]  # 8-32 B: busbw far below half the peak
    assert list(one.bandwidth_bound) == [False, False, False, True, True]
    two = sizes[sizes.setup == "2 nodes x 2 GPUs, nccl"]
    assert list(two.repeats) == [1] * 5 and list(two.busbw_gbps[3:]) == pytest.approx([7.5, 9.0])
    assert list(two.latency_bound) == [True, True, True, False, False]
    assert list(two.bandwidth_bound) == [False, False, False, True, True]


def test_the_marked_sizes_per_setup(study_dir):
    marked = built(study_dir)["allreduce_marked"]
    assert list(zip(marked.setup, marked.what, marked.bytes, strict=True)) == [
        ("4 GPUs, nccl", "ResNet-18 gradient", GRADIENT), ("4 GPUs, nccl", "DDP bucket", BUCKET),
        ("2 nodes x 2 GPUs, nccl", "ResNet-18 gradient", GRADIENT), ("2 nodes x 2 GPUs, nccl", "DDP bucket", BUCKET)]
    assert list(marked.busbw_gbps) == pytest.approx([16.5, 15.0, 9.0, 7.5])


def test_the_cells_and_runs_keep_every_status(study_dir):
    out = built(study_dir)
    cells = out["allreduce_cells"]
    assert list(zip(cells.setup, cells.repeat, cells.status, strict=True)) == [
        ("4 GPUs, nccl", 0, "ok"), ("4 GPUs, nccl", 1, "ok"), ("4 GPUs, nccl", 2, "ok"),
        ("2 nodes x 2 GPUs, nccl", 0, "ok"), ("2 nodes x 2 GPUs, nccl", 1, "failed"),
        ("2 nodes x 2 GPUs, nccl", 2, "not submitted")]
    assert cells.error.iloc[4] == "RuntimeError: NCCL error: unhandled system error"
    runs = out["allreduce_runs"].set_index("setup")
    assert runs.loc["2 nodes x 2 GPUs, nccl"].tolist() == [3, 1, "1 failed, 1 not submitted"]


def test_regimes_are_the_docstrings_example():
    """busbw 0.1, 5, 9 GB/s: peak 9, shares 0.011, 0.556, 1: latency-bound, between, bandwidth-bound."""
    table = pd.DataFrame({"setup": ["s"] * 3, "bytes": [8, 64, 512], "seconds": [10e-6, 12e-6, 30e-6],
                          "busbw_gbps": [0.1, 5.0, 9.0]})
    out = tables.regimes(table)
    assert list(out.latency_bound) == [True, False, False] and list(out.bandwidth_bound) == [False, False, True]
    assert list(out.regime) == ["latency-bound", "between", "bandwidth-bound"]
    assert list(out.share_of_peak) == pytest.approx([0.1 / 9, 5 / 9, 1.0])


def test_a_size_at_53_percent_of_its_peak_is_not_latency_bound():
    """The issue's case: its time within 2x the least (the old rule) yet 53% of the peak busbw:
    more of its time moves bytes than waits on the fixed cost."""
    table = pd.DataFrame({"setup": ["s"] * 3, "bytes": [8, 2**20, 2**24], "seconds": [20e-6, 39e-6, 400e-6],
                          "busbw_gbps": [1e-3, 5.3, 10.0]})
    assert list(tables.regimes(table).regime) == ["latency-bound", "between", "bandwidth-bound"]


def test_the_sweep_grid_marks_the_regimes_and_names_the_marked_sizes(study_dir):
    out = grids.build(built(study_dir))
    assert [g.key for g in out] == ["allreduce_cells", "allreduce_marked", "allreduce_sweep_0", "allreduce_sweep_1"]
    sweep = out[2]
    assert sweep.title == "All-reduce vs message size: 4 GPUs, nccl"
    assert [r[0] for r in sweep.rows] == ["8 B", "16 B", "32 B", "25 MiB (DDP bucket)", "42.6 MiB (ResNet-18 gradient)"]
    assert [r[-1] for r in sweep.rows] == ["latency-bound"] * 3 + ["bandwidth-bound"] * 2
    assert sweep.rows[0][2] == "12 (10-14) *" and sweep.rows[4][4] == "16.5 (15-18) *" and sweep.rows[3][5] == "90%"
    assert out[1].rows[0][:4] == ["4 GPUs, nccl", "42.6 MiB (ResNet-18 gradient)", "4,063 (3,725-4,470) *",
                                  "16.5 (15-18) *"]
    assert out[1].rows[0][5] == "16.5 at 42.6 MiB"


def test_a_study_of_many_setups_shows_the_first_sweeps_and_says_where_the_rest_are(study_dir):
    """At most View.rows lines a table and sweeps: with 1, the first cell, setup and sweep."""
    out = grids.build(built(study_dir), View(rows=1))
    assert [g.key for g in out] == ["allreduce_cells", "allreduce_marked", "allreduce_sweep_0"]
    assert len(out[0].rows) == 1 and out[0].more.startswith("1 of 6 cells shown; 1 of 6 have no result yet")
    assert len(out[1].rows) == 2 and out[1].more.startswith("1 of 2 setups shown")  # a setup's two marked sizes
    assert out[2].more == "The sweeps of 1 more setups are in allreduce_sizes.csv."


def test_an_empty_study_says_there_is_no_result(tmp_path):
    write_results(tmp_path, planned=(AllreduceCell(**ONE_NODE),))
    out = grids.build(built(tmp_path))
    assert out[1].empty.startswith("No all-reduce result yet: 0 of 1 cells ok (1 not submitted)")
    assert [g.key for g in out] == ["allreduce_cells", "allreduce_marked"]


def edit_block(results_dir: Path, change) -> Path:
    """Change the findings of the 4-GPU repeat 0's result file."""
    path = results_dir / f"{AllreduceCell(**ONE_NODE).cell_id}.json"
    data = json.loads(path.read_text())
    change(data["allreduce"])
    path.write_text(json.dumps(data))
    return path


def _world_size_8(block) -> None:
    block["world_size"] = 8
    for s in block["sizes"]:
        s["algbw_gbps"], s["busbw_gbps"] = bandwidth_gbps(s["bytes"], s["seconds"], 8)


@pytest.mark.parametrize("change, words", [
    (lambda b: b["sizes"][0].update(seconds="fast"), "allreduce.sizes[0].seconds must be a number, got 'fast'"),
    (lambda b: b["sizes"][4].update(busbw_gbps=1e6), "allreduce.sizes[4].busbw_gbps = 1000000.0 disagrees"),
    (lambda b: b.clear(), "allreduce: missing ['world_size'"),
])
def test_a_block_of_wrong_types_or_ranges_is_an_error_naming_its_file(study_dir, capsys, change, words):
    """As a training or PTQ result's: its findings are type-checked when the file is read."""
    path = edit_block(study_dir, change)
    assert main(["collect", "--results", str(study_dir)]) == 2
    err = capsys.readouterr().err
    assert f"{path.name} is unreadable" in err and words in err and "Traceback" not in err


@pytest.mark.parametrize("change, words", [
    (lambda b: b.update(sizes=b["sizes"][:2]), "allreduce.sizes are not the sizes the cell asks"),
    (_world_size_8, "allreduce.world_size = 8, but the cell asks 4"),
])
def test_findings_that_do_not_match_their_cell_are_an_unreadable_cell_and_in_no_table(study_dir, capsys, change, words):
    path = edit_block(study_dir, change)
    out = built(study_dir)
    cell = out["allreduce_cells"].set_index("cell_id").loc[path.stem]
    assert cell.status == "unreadable" and words in cell.error and f"{path.stem}.json" in cell.error
    assert "rerun `submit`" in cell.error
    one = out["allreduce_sizes"][out["allreduce_sizes"].setup == "4 GPUs, nccl"]
    assert set(one.repeats) == {2}, "the hostile repeat is in no median"
    assert main(["collect", "--results", str(study_dir)]) == 0
    printed = capsys.readouterr()
    assert "unreadable" in printed.out and "Traceback" not in printed.out + printed.err


def test_collect_cli_json_and_report(study_dir, capsys):
    out = cli_json(capsys, "collect", "--results", study_dir, "--report")
    assert set(out) == {"allreduce_sizes", "allreduce_marked", "allreduce_cells", "answers", "written"}
    row = next(r for r in out["allreduce_marked"] if r["setup"] == "4 GPUs, nccl" and r["what"] == "DDP bucket")
    assert row["busbw_gbps"] == pytest.approx(15.0) and row["bandwidth_bound"] is True
    for name in ("report.html", "report.md", "tables.md", "allreduce_sizes.csv", "plots/allreduce_busbw_vs_size.png"):
        assert (study_dir / name).is_file(), name
    assert "All-reduce study" in (study_dir / "report.html").read_text()


def test_a_result_whose_cell_is_bad_is_an_error_naming_the_file(study_dir, capsys):
    path = study_dir / f"{AllreduceCell(**ONE_NODE).cell_id}.json"
    data = json.loads(path.read_text())
    path.write_text(json.dumps({**data, "cell": {**data["cell"], "factor": 3}}))
    assert main(["collect", "--results", str(study_dir)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: result file {path}") and "factor must be one of [2, 4]" in err
    assert len(err.strip().splitlines()) == 1


def test_a_two_node_cell_that_ran_on_one_machine_is_a_setup_of_its_own(tmp_path):
    """Off-cluster, every rank of a 2-node cell runs on this machine: its link is not the network."""
    cell = AllreduceCell(**TWO_NODES)
    local = allreduce_result(cell, seconds((20e-6,) * 3, (5.0, 6.0)))
    local.env.update(hostnames=["laptop"], nodes=[])
    out = built(write_results(tmp_path, [local]))
    assert set(out["allreduce_sizes"].setup) == {"2 nodes x 2 GPUs, nccl [ran on 1 node]"}
