"""A PTQ study's tables, report and CLI output, from hand-built results (tests/collect/dirs.py:
three training seeds with NOTEBOOK_ACCURACY, a failed cell and a missing one), numbers worked by hand."""
from __future__ import annotations

import json
import re

import pytest

from collect.load import load
from collect.report import collect, status_counts, write_report
from jobs.core.cell import run_seed
from orchestrator.cli import main
from tests.collect.dirs import NOTEBOOK_ACCURACY, ptq_results, write_ptq
from tests.factories import NOTEBOOK, ptq_cell, ptq_result
from tests.helpers import cli_json

TRAINING_GRIDS = ["q1", "table1", "strong", "table2", "table3", "test", "q4", "overhead", "sweep"]
PTQ_GRIDS = ["ptq_cells", "ptq_notebook", "ptq_integer", "ptq_scales", "ptq_weights", "ptq_activations",
             "ptq_sweep_weights", "ptq_sweep_activations", "ptq_clipping"]


@pytest.fixture
def ptq_dir(tmp_path):
    """This test's own PTQ results dir."""
    return write_ptq(tmp_path / "ptq")


@pytest.fixture(scope="module")
def collected(tmp_path_factory):
    """The PTQ study collected once, in a dir of its own: its tables, grids and the files written."""
    return collect(write_ptq(tmp_path_factory.mktemp("collected")))


def grid(collected, key):
    return next(g for g in collected.grids if g.key == key)


def row(g, name):
    return next(r for r in g.rows if r[0] == name)


def test_the_notebook_table_has_the_six_steps_with_medians_and_deltas_over_three_seeds(collected):
    table = collected.tables["ptq_notebook"]
    assert list(table.name) == list(NOTEBOOK)
    # accuracies per seed (0.50, 0.54, 0.52), (0.51, 0.53, 0.52), (0.49, 0.52, 0.52), ...
    assert list(table.accuracy.round(4)) == [0.52, 0.52, 0.52, 0.55, 0.50, 0.55]
    # W8A8 - float, seed by seed: 0.49 - 0.50, 0.52 - 0.54, 0.52 - 0.52 = -0.01, -0.02, 0 -> -0.01 (-0.02 to 0)
    w8a8 = table[table.name == "Net W8A8"].iloc[0]
    assert (round(w8a8.delta, 4), round(w8a8.delta_min, 4), round(w8a8.delta_max, 4)) == (-0.01, -0.02, 0.0)
    assert (w8a8.repeats, w8a8.runs, w8a8.ok) == (3, 5, 3)

    g = grid(collected, "ptq_notebook")
    assert row(g, "Net float") == ["Net float", "nothing (float)", "52.00% (50.00%-54.00%) *", "baseline", "0.980",
                                   "3 of 5"]
    assert row(g, "Net W8") == ["Net W8", "weights 8-bit; activations float", "52.00% (51.00%-53.00%)",
                                "+0.00 (-1.00 to +1.00) [-2.48, +2.48]", "0.980", "3 of 5"]
    assert row(g, "Net W8A8")[1:4] == ["weights 8-bit; input and activations 8-bit", "52.00% (49.00%-52.00%) *",
                                       "-1.00 (-2.00 to +0.00) [-3.48, +1.48]"]
    # the bias left float: 0.50 - 0.55, 0.47 - 0.52, 0.50 - 0.56 -> mean -5.33 (-6 to -5) points (TA7 12: the
    # paired t interval of the mean, -5.33 -+ 4.3027 x 0.57735 / sqrt 3)
    assert row(g, "NetWithBias W8 float-bias")[1:4:2] == ["weights 8-bit; activations float; bias float",
                                                         "-5.33 (-6.00 to -5.00) [-6.77, -3.90]"]
    assert "Seeds: 3 of 5 cells ok (1 failed, 1 not submitted)" in g.caption


def test_the_integer_check_says_0_of_n_differ(collected):
    g = grid(collected, "ptq_integer")
    assert g.caption.startswith("Integer-only run vs the float simulation's predictions: 0 of 6,000 test images "
                                "differ")  # W8A8 and W8A8B32, 3 seeds of 1,000 images
    assert "Not 0" not in g.caption
    assert row(g, "Net W8A8") == ["Net W8A8", "3", "3,000", "0", "0", "int32", "float32", "15,000", "0", "0"]
    # the 8 sweep variants with quantized activations: inputs checked, 5 layers x 1,000 values x 3 seeds each
    checks_only = g.rows[-1]
    assert checks_only[0].startswith("8 other variants") and checks_only[7] == "120,000"


def test_mismatches_are_counted_and_the_line_says_why_to_look(tmp_path):
    results = write_ptq(tmp_path, ptq_results(mismatches=2))  # seed 1: 2 images differ in W8A8 and in W8A8B32
    g = grid(collect(results), "ptq_integer")
    assert "4 of 6,000 test images differ" in g.caption and "Not 0: see the accumulator and dtype" in g.caption
    assert row(g, "Net W8A8")[3] == "2"


def test_the_sweep_tables_put_bits_in_columns_and_choices_in_rows(collected):
    weights = grid(collected, "ptq_sweep_weights")
    assert weights.header == ["weights only: granularity, range", "8 bits", "4 bits", "seeds"]
    assert [r[0] for r in weights.rows] == ["tensor, max", "tensor, MSE-optimal", "channel, max", "channel, MSE-optimal"]
    # 4 bits, per tensor, max: float less 0.04 in each seed: 0.46, 0.50, 0.48 -> 48% (46-50), spread 0.04/0.48 > 5%
    assert row(weights, "tensor, max") == ["tensor, max", "52.00% (50.00%-54.00%) *", "48.00% (46.00%-50.00%) *", "3"]
    assert "Float Net: 52.00% (50.00%-54.00%) *" in weights.caption

    activations = grid(collected, "ptq_sweep_activations")
    assert activations.header == ["activations: range, calibration", "8 bits", "2 bits", "seeds"]
    assert [r[0] for r in activations.rows] == ["max, 16 images", "max, 400 images", "MSE-optimal, 16 images",
                                                "MSE-optimal, 400 images"]
    assert row(activations, "MSE-optimal, 400 images")[1:3] == ["52.00% (50.00%-54.00%) *", "42.00% (40.00%-44.00%) *"]
    sweep = collected.tables["ptq_sweep"]
    assert set(sweep.part) == {"weights", "activations"} and len(sweep) == 16


def test_scales_and_statistics_show_one_seed_and_say_which(collected):
    seed0 = collected.tables["ptq_cells"].set_index("training_seed").cell_id[0]
    scales = grid(collected, "ptq_scales")
    assert f"training seed 0 (cell {seed0})" in scales.caption
    assert row(scales, "Net W8A8")[:6] == ["Net W8A8", "conv1", "700", "127", "37", "0.0004162"]  # 37 / (700 x 127)
    fc3 = [r for r in scales.rows if r[0] == "NetWithBias W8A8B32" and r[1] == "fc3"][0]
    assert fc3[6] == "18,040"  # the bias scale n_w C_{k-1} = 820 x 22

    weights = grid(collected, "ptq_weights")  # [-0.2, 0.25], mean 0.01, std 0.1: 3 sigma reaches 0.31 > 0.25
    assert row(weights, "conv1")[6:] == ["-0.29", "0.31", "wider", "0.25 (max)", "508", "0.01"]
    activations = grid(collected, "ptq_activations")  # conv1 [0, 9], mean 1, std 2/3: 3 sigma reaches 3 < 9
    assert row(activations, "conv1")[6:] == ["-1", "3", "narrower", "9 (max)", "14.11"]
    assert row(activations, "input")[8] == "wider"


def test_a_ptq_dir_builds_only_ptq_tables_and_counts_every_cell(collected):
    assert [g.key for g in collected.grids] == PTQ_GRIDS
    assert status_counts(collected.cells) == "3 ok, 1 failed, 1 not submitted"
    assert (collected.out_dir / "ptq_notebook.csv").read_text().startswith("setup,name,")
    assert not (collected.out_dir / "q1.csv").exists()
    by_seed = {r[1]: r for r in grid(collected, "ptq_cells").rows}
    assert by_seed[str(run_seed(0, 3))][2] == "failed: RuntimeError: CUDA error"
    assert by_seed[str(run_seed(0, 4))][2] == "not submitted"


def test_a_training_dir_builds_only_training_tables(mixed_dir):
    training = collect(mixed_dir)
    assert [g.key for g in training.grids] == TRAINING_GRIDS
    assert not any(key.startswith("ptq") for key in training.tables)
    assert training.table_files == (*TRAINING_GRIDS, "spent")  # spent: a CSV always, a grid only where measured


def test_the_ptq_report_has_its_sections_and_three_plots(ptq_dir):
    write_report(collect(ptq_dir))
    html = (ptq_dir / "report.html").read_text()
    assert "<h1>Quantization study <em>ptq-by-hand</em>: post-training quantization" in html
    assert html.count('<img src="data:image/png;base64,') == 3
    for title in ("Part B: the notebook", "Integer-only check", "Scales per layer", "Weights per layer",
                  "Activations per layer", "Sweep: weights only", "Sweep: 8-bit weights", "Environment"):
        assert title in html
    assert "0 of 6,000 test images differ" in html and "Cells: 3 ok, 1 failed, 1 not submitted." in html
    assert "Table 1:" not in html
    markdown = (ptq_dir / "report.md").read_text()
    links = re.findall(r"!\[[^\]]*\]\((plots/[a-z0-9_]+\.png)\)", markdown)
    assert sorted(links) == ["plots/ptq_accuracy_vs_bits.png", "plots/ptq_activation_histograms.png",
                             "plots/ptq_weight_histograms.png"]
    assert all((ptq_dir / link).read_bytes().startswith(b"\x89PNG") for link in links)


def test_the_training_report_keeps_its_heading(mixed_dir):
    write_report(collect(mixed_dir))
    assert "<h1>Scaling study <em>mixed</em>: ResNet-18 data-parallel training</h1>" in (mixed_dir / "report.html").read_text()


def test_collect_json_gives_the_ptq_tables(ptq_dir, capsys):
    out = cli_json(capsys, "collect", "--results", ptq_dir)
    assert set(out) == {"ptq_notebook", "ptq_integer", "ptq_scales", "ptq_weights", "ptq_activations", "ptq_sweep",
                        "ptq_clipping", "ptq_cells", "answers", "written"}
    assert [r["name"] for r in out["ptq_notebook"]] == list(NOTEBOOK)


def test_unreadable_ptq_findings_are_an_error_naming_the_file(tmp_path, capsys):
    results = write_ptq(tmp_path)
    path = next(p for p in results.glob("*.json") if p.name != "plan.json" and '"ptq": {' in p.read_text())
    data = json.loads(path.read_text())
    del data["ptq"]["outcome"]["variants"]
    path.write_text(json.dumps(data))
    assert main(["collect", "--results", str(results)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: result file {path}") and "ptq.outcome.variants is missing" in err


@pytest.mark.parametrize("failed", [True, False])
def test_a_ptq_study_with_no_ok_result_shows_its_runs_and_says_there_is_no_result_yet(tmp_path, capsys, failed,
                                                                                      monkeypatch):
    """Just planned (every cell missing), or every cell that ran failed: the runs table and one line."""
    monkeypatch.setenv("COLUMNS", "200")  # the failure's reason on one line of the table
    bad = ptq_result(ptq_cell(0), status="failed", error="Traceback ...\nRuntimeError: CUDA error")
    results = write_ptq(tmp_path, [bad], planned=(ptq_cell(1),))
    if not failed:  # nothing has run: collect says so and writes nothing (issue 43)
        (results / f"{bad.cell_id}.json").unlink()
        assert main(["collect", "--results", str(results)]) == 2
        assert "no results yet" in capsys.readouterr().err and not (results / "answers.md").exists()
        return
    assert main(["collect", "--results", str(results)]) == 0
    out = capsys.readouterr().out
    assert "PTQ runs" in out and "Traceback" not in out
    assert ("failed: RuntimeError: CUDA error" in out) == failed and "not submitted" in out
    status = "0 of 2 cells ok (1 failed, 1 not submitted)" if failed else "0 of 2 cells ok (2 not submitted)"
    assert f"No PTQ result yet: {status}." in out
    cells = collect(results).tables["ptq_cells"]
    assert list(cells.training_seed) == [0, run_seed(0, 1)]


def test_a_result_records_its_training_seed_and_old_results_count_seed_plus_repeat(tmp_path):
    """Results written before run_seed trained with seed + repeat: (seed 0, repeat 1) and (seed 1,
    repeat 0) were one training seed (the second even reused the first's network), so they are one
    seed in the tables, not two. A result that records its run_seed is counted by it."""
    old = [ptq_result(ptq_cell(r, seed=s), a) for (s, r), a in zip([(0, 1), (1, 0)], NOTEBOOK_ACCURACY, strict=False)]
    for r in old:
        r.run_seed = None
    tables = collect(write_ptq(tmp_path / "old", old, planned=())).tables
    assert list(tables["ptq_cells"].training_seed) == [1, 1]
    assert set(tables["ptq_notebook"].repeats) == {1}

    new = [ptq_result(ptq_cell(r, seed=s), a) for (s, r), a in zip([(0, 1), (1, 0)], NOTEBOOK_ACCURACY, strict=False)]
    assert [r.run_seed for r in new] == [run_seed(0, 1), 1]
    tables = collect(write_ptq(tmp_path / "new", new, planned=())).tables
    assert set(tables["ptq_notebook"].repeats) == {2}


def test_results_are_held_without_histograms_and_the_shown_seed_reads_its_own_again(ptq_dir):
    """Reading a study of 2,000 PTQ results keeps none of their histograms; the one seed whose layers
    are shown (the lowest training seed, repeat 0's) has them, read again from its file."""
    held = [c.kept.body.outcome for c in load(ptq_dir).of_kind("ptq") if c.status == "ok"]
    assert len(held) == 3 and all(s.stats.histogram.edges == () == s.stats.histogram.counts
                                  for o in held for s in (*o.weight_stats, *o.activation_stats))
    histograms = collect(ptq_dir).tables["ptq_histograms"]
    assert len(histograms) == 5 + 6 and set(histograms.training_seed) == {run_seed(0, 0)}
    weights = histograms[histograms.which == "weights"].iloc[0]  # [-0.2, 0.25] in 4 bins (tests/factories)
    assert weights.edges == pytest.approx((-0.2, -0.0875, 0.025, 0.1375, 0.25)) and weights.counts == (10, 40, 40, 10)
    first = histograms[histograms.which == "activations"].iloc[0]  # the input, [-1, 1]; conv1 shares a weight's name
    assert (first.layer, first.edges) == ("input", pytest.approx((-1.0, -0.5, 0.0, 0.5, 1.0)))
    conv1 = histograms[(histograms.which == "activations") & (histograms.layer == "conv1")].iloc[0]
    assert conv1.edges == pytest.approx((0.0, 2.25, 4.5, 6.75, 9.0))
