"""Findings through collect's outputs: listed in `collect --json` with evidence that points at a
real row of a written table, printed after the tables, first in the report (Markdown and HTML),
with the CPU caveat first where the runs ran on a CPU; the seed's timings through `collect --report`."""
from __future__ import annotations

import json

import pytest

from collect.report import collect, write_report
from orchestrator.cli import main
from tests.collect.dirs import seed_results, write_allreduce, write_ptq
from tests.factories import cell, train_result, write_results

LABEL_FIELDS = (("batch_per_gpu", "batch {} per GPU"), ("layer", "{}"), ("name", "{}"), ("cell_id", "{}"), ("setup", "{}"))


def check_evidence(out: dict) -> None:
    """Every finding has evidence; each names a table in the JSON and a row of it that the label describes."""
    assert out["findings"]
    for finding in out["findings"]:
        assert finding["evidence"], finding["text"]
        assert set(finding) == {"question", "text", "numbers", "evidence"}
        for e in finding["evidence"]:
            rows = out[e["table"]]
            assert 0 <= e["row"] < len(rows), e
            row = rows[e["row"]]
            field, shown = next((f, s) for f, s in LABEL_FIELDS if row.get(f) is not None)  # the row's name
            assert shown.format(row[field]) in e["label"], (e, row[field])


@pytest.mark.parametrize("write", ["mixed", "seed", "ptq", "allreduce"])
def test_every_finding_points_at_a_row_of_a_written_table(write, mixed_dir, tmp_path, capsys):
    path = {"mixed": lambda: mixed_dir, "seed": lambda: write_results(tmp_path, seed_results()),
            "ptq": lambda: write_ptq(tmp_path), "allreduce": lambda: write_allreduce(tmp_path)}[write]()
    assert main(["collect", "--results", str(path), "--json"]) == 0
    check_evidence(json.loads(capsys.readouterr().out))


def test_the_seeds_timings_through_collect_report(tmp_path, capsys):
    path = write_results(tmp_path, seed_results(), study="seed")
    assert main(["collect", "--results", str(path), "--json", "--report"]) == 0
    found = json.loads(capsys.readouterr().out)["findings"]
    numbers = {}
    for f in found:
        for name, value in f["numbers"].items():
            numbers.setdefault((f["question"], name), value)
    assert numbers["A.Q1", "largest_fitting_batch"] == 512 and numbers["A.Q1", "first_oom_batch"] is None
    assert numbers["A.Q1", "images_per_s_batch_512"] == pytest.approx(50_000 / 1.76)
    assert numbers["A.Q2", "speedup_batch_128"] == pytest.approx(5.98 / 9.41)  # 2 GPUs, DataParallel: slower
    assert numbers["A.Q2", "worst_efficiency"] == pytest.approx(5.98 / 7.18 / 4)
    assert numbers["A.Q2", "best_speedup"] == pytest.approx(5.98 / 1.88)
    assert numbers["A.Q2", "strong_speedup"] == pytest.approx(4.64 / 7.18)
    assert numbers["A.Q3.1", "comm_share_est"] == pytest.approx((9.03 - 3.51 / 2) / 9.03)
    report = (path / "report.md").read_text()
    assert "0.64x at batch 128 (efficiency 0.32; 9.41 s against 5.98 s: slower than 1 GPU)" in report


def test_the_console_shows_the_findings_on_demand(mixed_dir, capsys):
    assert main(["collect", "--results", str(mixed_dir)]) == 0
    out = capsys.readouterr().out
    assert "Findings, computed" not in out and "--findings" in out
    assert main(["collect", "--results", str(mixed_dir), "--findings"]) == 0
    out = capsys.readouterr().out
    assert out.index("A.Q4.2  How to improve") < out.index("Findings, computed from the tables above")
    assert "A.Q1    On 1 GPU (NVIDIA H200), batch 128 per GPU is the largest" in out


def test_the_report_holds_each_finding_under_its_answer(mixed_dir):
    collected = collect(mixed_dir)
    write_report(collected)
    markdown = (mixed_dir / "report.md").read_text()
    assert markdown.index("## Contents") < markdown.index("## A.Q1:") < markdown.index("### Q1:") < \
        markdown.index("## A.Q2:") < markdown.index("## Environment")
    for finding in collected.findings:
        assert f"- {finding.text} [{finding.evidence_text()}]" in markdown or \
            f"- **{finding.question}** {finding.text} [{finding.evidence_text()}]" in markdown
    q2 = markdown[markdown.index("## A.Q2:"):markdown.index("## A.Q3.1:")]
    assert "<details><summary>Findings behind this answer" in q2 and "Weak scaling, most efficient: 2 GPUs, DDP" in q2
    html = (mixed_dir / "report.html").read_text()
    assert html.index('<h2 id="contents">') < html.index('<h2 id="a-q1">') < html.index('<h3 id="q1">') < \
        html.index('<h2 id="environment">')
    section = html[html.index('<h2 id="a-q2">'):html.index('<h2 id="a-q3-1">')]
    assert "<details>" in section and "Weak scaling, most efficient: 2 GPUs, DDP, batch 32 per GPU" in section


def test_a_cpu_run_says_so_inside_the_answers(tmp_path):
    runs = [train_result(cell(engine, b, gpus, repeat=i), epoch_s=60.0 + i, gpu_model="cpu", test_accuracies=[0.1, 0.1])
            for engine, gpus in (("single", 1), ("dp", 2), ("ddp", 2)) for b in (32, 128) for i in range(3)]
    collected = collect(write_results(tmp_path, runs, study="quick"))
    answers = {a.id: a for a in collected.answers}
    for key in ("A.Q1", "A.Q2", "A.Q3.1"):
        assert answers[key].text.count("these ran on a CPU, not a GPU") == 1, answers[key].text
    assert answers["A.Q1"].findings[0].text.startswith("6 of the 6 configurations with a result ran on a CPU")
