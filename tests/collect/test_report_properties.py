"""The report as a strict TA and a reader see it (issue 44). Class 7: Part B handed in as the
assignment asks: the plots B.Q1 and B.Q3 ask for, the code B.Q2, B.Q4 and B.Q5 ask for (the functions
that ran, as the job read them), each figure said for what it is. Class 8: the report read at 1280 px:
evidence rows counted as the tables print them, a CPU run without a CUDA version, cited references
listed and linked, empty tables in plain words, cells that wrap, error bars and the ideal line only
over the GPU counts measured. Each class has a checker over the written report; each test runs it on
a generated set, and on fabricated bad reports of its class, which it must catch."""
from __future__ import annotations

import dataclasses
import html
import inspect
import json
import re
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from collect.render import table_name
from collect.report import collect, write_report
from tests.collect.browser import chromium_binary, run_chromium
from tests.collect.dirs import NOTEBOOK_ACCURACY, PENDING, mixed_results, write_ptq
from tests.factories import ptq_cell, ptq_result, write_results

# --- class 7: Part B handed in -------------------------------------------------------------------------

ASKED = {"B.Q2": ("quantized_weights",), "B.Q4": ("quantize_initial_input", "quantize_activations", "forward"),
         "B.Q5": ("quantized_bias",)}  # the notebook functions each question asks to write
PLOTTED = ("B.Q1", "B.Q3")  # the questions that ask for plots


def sections(markdown: str) -> dict[str, str]:
    """answers.md by question: "B.Q2" -> its text up to the next section (a question, or the last: how it was produced)."""
    parts = re.split(r"^## ", markdown, flags=re.M)
    return {m.group(1): part[m.end():] for part in parts if (m := re.match(r"(B\.Q\d): ", part))}


def part_b_defects(answers: Path, ran: set[str]) -> list[str]:
    """What a strict TA marks down in Part B's answers.md (`ran`: the source text of every function
    the job ran for the notebook's)."""
    found, by_question = [], sections(answers.read_text())
    for q in PLOTTED:
        images = re.findall(r"!\[[^\]]*\]\(([^)]+\.png)\)", by_question.get(q, ""))
        if not images or not all((answers.parent / image).is_file() for image in images):
            found.append(f"{q}: no plot")
    for q, names in ASKED.items():
        text = by_question.get(q, "")
        blocks = re.findall(r"^(`{3,})python\n(.*?)\n\1$", text, flags=re.M | re.S)
        if not blocks:
            found.append(f"{q}: no code")
        found += [f"{q}: printed code that did not run" for _, code in blocks if code + "\n" not in ran]
        found += [f"{q}: no code for the notebook's {n}" for n in names if f"for the notebook's `{n}`" not in text]
    for q, text in by_question.items():
        if "-128..127" in text:
            found.append(f"{q}: a scale of 127 / max said to map to -128..127")
        paragraph = next((line for line in text.split("\n")[1:] if line.strip()), "")  # after the title
        # the sentence that says the word names the figure (TA4 25: the paired delta leads, the word after it)
        for change in [x for x in re.split(r"(?<=\.) ", paragraph)
                       if re.search(r"\d+\.\d\d points (?:lower|higher)|not clearly different from", x)]:
            if "over 3 runs" in paragraph and "mean of the seeds' paired differences" not in change:
                found.append(f"{q}: '{change[:30]}' does not say which figure it is")
    q3 = by_question.get("B.Q3", "")
    if re.search(r"\[0, [\d.]+\\?\]", q3) and "half of the 255 codes are wasted" not in q3:
        found.append("B.Q3: post-ReLU activations in signed codes, their waste unsaid")
    study = answers.read_text().partition("### Study file")[2]
    if not re.search(r"^```(toml|text)\n.+?\n```$", study, flags=re.M | re.S):
        found.append("appendix: neither the study file nor the plan's record of the set: it cannot be made again")
    for line in (line for text in by_question.values() for line in text.split("\n")):
        if "notebook" in line and re.search(r"\b400\b", line) and "404" not in line:
            found.append(f"the notebook's calibration said as 400 images (its loop sees 404): {line[:60]}")
        if "sees 404" in line and not re.search(r"sees 404[^.]*the 400 asked is used: [^.]*overshooting", line):
            found.append(f"the notebook's 404 said, but not why the study takes 400 (TA7 13): {line[:60]}")
    for q, text in by_question.items():
        paragraph = next((line for line in text.split("\n")[1:] if line.strip()), "")
        named = [n for n in re.findall(r"^def (\w+)\(", text, flags=re.M)  # a word ("integers") only as a subject
                 if re.search(rf"\b{n}\b" if "_" in n else rf"\b{n} (sets|gives)\b", paragraph)]
        found += [f"{q}: the code's name {n} stands in for the maths" for n in named]
        for a, b in re.findall(r"(\d+\.\d\d)% \([^)]*\) against (\d+\.\d\d)% \([^)]*\) in float[,:] not "
                              r"distinguishable from it(?! \(the mean of the seeds' paired differences)", paragraph):
            if a != b:
                found.append(f"{q}: {a}% against {b}% 'not distinguishable' without the figure it rests on")
    q2 = by_question.get("B.Q2", "")
    lowest = float_lowest(q2)
    swept = [float(x) for part in by_question.values() for table in re.findall(r"^### Sweep.*?(?=^#|\Z)", part, re.M | re.S)
             for x in re.findall(r"\| (\d+\.\d\d)% ", table)]
    if "no quantization effect can show" in q2 and lowest is not None and any(x < lowest for x in swept):
        found.append("B.Q2: says no quantization effect can show, yet the sweep falls below every float seed")
    w8 = re.search(r"^\| Net W8 \|.*$", by_question.get("B.Q2", ""), flags=re.M)
    if w8 is None or "activations float" not in w8.group(0):
        found.append("B.Q2: the W8 row does not say whether activations were quantized")
    return found


def float_lowest(q2: str) -> float | None:
    """The float Net's lowest seed as its table row prints it ("| Net float | ... | 50.00% (49.00%-51.00%)")."""
    row = re.search(r"^\| Net float \|[^|]*\| ([\d.]+)%(?: \(([\d.]+)%-)?", q2, flags=re.M)
    return None if row is None else float(row.group(2) or row.group(1))


@pytest.fixture(scope="module")
def part_b(tmp_path_factory) -> tuple[Path, set[str]]:
    """A PTQ set whose results carry the code their job ran (jobs.ptq.listing, as run.py records it),
    collected with its report: (answers.md, the source of every function that ran)."""
    from jobs.ptq.listing import NOTEBOOK_CODE, listings  # torch: the job's side, only here

    code = listings()
    results = [ptq_result(ptq_cell(i), a) for i, a in enumerate(NOTEBOOK_ACCURACY)]
    results = [dataclasses.replace(r, body=dataclasses.replace(r.body, code=code)) for r in results]
    out = write_ptq(tmp_path_factory.mktemp("part-b"), results, ())
    write_report(collect(out))
    return out / "answers.md", {textwrap.dedent(inspect.getsource(f)) for _, functions in NOTEBOOK_CODE for f in functions}


def test_part_b_hands_in_its_plots_and_the_code_that_ran(part_b):
    answers, ran = part_b
    assert part_b_defects(answers, ran) == []
    assert "mean of the seeds' paired differences" in answers.read_text()  # the check below can fail


def test_plain_collect_hands_in_the_plots_part_b_asks_for(tmp_path):
    """`collect` without --report: answers.md is the hand-in, so B.Q1's and B.Q3's histograms are
    drawn beside it and embedded under their questions (TA 28)."""
    out = write_ptq(tmp_path, [ptq_result(ptq_cell(i), a) for i, a in enumerate(NOTEBOOK_ACCURACY)], ())
    collect(out)
    found = part_b_defects(out / "answers.md", set())
    assert not [f for f in found if f.endswith("no plot")], found
    assert not (out / "report.html").exists()


def test_results_written_before_the_code_was_recorded_say_so(tmp_path):
    """No code in the results (a job before jobs.ptq.listing): each question that asks for code says
    none is printed and why, rather than printing another version of it."""
    from collect.render import NO_CODE, md_text

    out = write_ptq(tmp_path, [ptq_result(ptq_cell(i), a) for i, a in enumerate(NOTEBOOK_ACCURACY)], ())
    write_report(collect(out))
    by_question = sections((out / "answers.md").read_text())
    assert all(md_text(NO_CODE) in by_question[q] and "```" not in by_question[q] for q in ASKED)
    assert (out / "report.html").read_text().count(html.escape(NO_CODE)) == len(ASKED)


BAD_PART_B = {
    "code dropped": lambda t: re.sub(r"```python\n.*?\n```", "", t, flags=re.S),
    "code not the one that ran": lambda t: t.replace("return torch.clamp(torch.round(x * scale)",
                                                      "return torch.clamp(torch.floor(x * scale)", 1),
    "plot dropped": lambda t: re.sub(r"!\[[^\]]*\]\(plots/ptq_activation_histograms\.png\)", "", t),
    "scale to -128..127": lambda t: t.replace("-127..127", "-128..127", 1),
    "figure unnamed": lambda t: re.sub(r" \(the mean of the seeds' paired differences[^)]*\)", "", t, count=1),
    "drop unnamed": lambda t: re.sub(r"(points lower than in float) \(the mean of the seeds' paired differences[^)]*\)",
                                     r"\1", t),
    "waste unsaid": lambda t: t.replace("half of the 255 codes are wasted", "the codes are used"),
    "effect said impossible": lambda t: t.replace("\n\n_Evidence: table ptq_notebook rows 1, 2",
                                                  " The task saturates, so no quantization effect can show."
                                                  "\n\n_Evidence: table ptq_notebook rows 1, 2", 1),
    "study unsaid": lambda t: re.sub(r"(### Study file\n\n).*", r"\1_study.toml is empty._\n", t, flags=re.S),
    "404 unsaid": lambda t: t.replace("404", "400"),
    "404 used without a why": lambda t: re.sub(r"; the 400 asked is used: [^;)]*", "", t),
    "function for maths": lambda t: t.replace("each later layer multiplies in its own n_W and n_Out.",
                                              "each later layer multiplies in its own n_W and n_Out; "
                                              "quantize_activations sets them.", 1),
    "medians unexplained": lambda t: re.sub(r"Quantized to int32, the test accuracy is .*? in float\.",
                                            "Quantized to int32: 99.60% (82.10%-100.00% over 3 runs) against 99.80% "
                                            "(82.10%-100.00% over 3 runs) in float, not distinguishable from it.", t,
                                            count=1),
    "W8 row silent": lambda t: t.replace("| Net W8 | weights 8-bit; activations float |", "| Net W8 | weights |"),
}


@pytest.mark.parametrize("defect", BAD_PART_B)
def test_a_fabricated_part_b_of_each_defect_is_marked_down(part_b, tmp_path, defect):
    answers, ran = part_b
    bad = BAD_PART_B[defect](answers.read_text())
    assert bad != answers.read_text(), "the fabrication changed nothing"
    (tmp_path / "answers.md").write_text(bad)
    (tmp_path / "plots").symlink_to(answers.parent / "plots")
    assert part_b_defects(tmp_path / "answers.md", ran) != []


# --- class 8: the report as a reader sees it -------------------------------------------------------------

CPU_ENV = {"device": "cpu", "gpu_model": "cpu", "gpus_visible": 0, "torch": "2.11.0+cu130", "cuda": "13.0",
           "python": "3.12.3", "hostnames": ["vm"], "started_at": "2025-04-01T10:00:00+00:00",
           "ended_at": "2025-04-01T10:05:00+00:00"}


def printed_rows(page: str) -> dict[str, int]:
    """Each table's name in a sentence ("Table 1", "table q1") -> the rows it prints."""
    rows = {}
    for part in page.split('<h3 id="')[1:]:
        key = part[:part.index('"')]
        body = re.split(r"<h[23] |</section>", part, maxsplit=1)[0]
        table = re.search(r"<tbody>(.*?)</tbody>", body, flags=re.S)
        rows[table_name(key)] = len(re.findall(r"<tr>", table.group(1))) if table else 0
    return rows


def reader_defects(page: str) -> list[str]:
    """What a reader of report.html finds wrong without running it: cells that cannot wrap, evidence
    rows that are not the printed rows, a CUDA version on a CPU run, a citation with no entry in the
    reference list, an empty table with units and formulas for numbers that are not there."""
    found = []
    style = re.search(r"<style>(.*?)</style>", page, flags=re.S).group(1)
    if re.search(r"\btd\s*\{[^}]*white-space:\s*nowrap", style):
        found.append("table cells do not wrap: a wide table hides columns behind a scrollbar")
    rows = printed_rows(page)
    for evidence in re.findall(r'<p class="evidence">Evidence: (.*?)</p>', page):
        for name, numbers in re.findall(r"((?:Table|table) \S+) rows? ([\d, ]+)", html.unescape(evidence)):
            cited = [int(n) for n in numbers.split(",")]
            if name not in rows or not all(1 <= n <= rows[name] for n in cited):
                found.append(f"evidence {name} rows {numbers}: not rows the table prints (1..{rows.get(name)})")
    env = dict(re.findall(r'<tr><th style="text-align:left">([^<]+)</th><td[^>]*>([^<]*)</td></tr>', page))
    if env.get("GPU model") == "cpu" and re.search(r"\d", env.get("CUDA", "")):
        found.append(f"a CPU run's environment says CUDA {env['CUDA']}")
    listed = set(re.findall(r'<li id="(ref-\d+)"', page))
    answers = " ".join(re.findall(r'<p class="answer">(.*?)</p>', page, flags=re.S))
    linked = re.findall(r'<a class="cite" href="#(ref-\d+)">', answers)
    found += [f"citation {ref} with no entry in the reference list" for ref in linked if ref not in listed]
    bare = re.sub(r'<a class="cite"[^>]*>\[\d+\]</a>', "", answers)
    found += [f"citation {m} not linked to the reference list" for m in re.findall(r"\[\d+\]", bare)]
    for name in ("Goyal et al.", "Patarasuk and Yuan"):
        found += [f"{name} cited with no reference" for _ in re.finditer(re.escape(name) + r"(?! <a class=\"cite\")", answers)]
    for empty in re.findall(r'<p class="empty">.*?</p>(.*?)(?=<h[23] |<details|<section|</section)', page, flags=re.S):
        if 'class="caption"' in empty.split("<h3")[0] or "<li><code>" in empty:
            found.append("an empty table with units and formulas for numbers it does not have")
    if re.search(r'<p class="caption">Units:[^<]*</p>\s*<p class="empty">', page):
        found.append("an empty table with units for numbers it does not have")
    return found


@pytest.fixture(scope="module")
def cpu_report(tmp_path_factory) -> str:
    """The mixed dir's 2-epoch runs, run on a CPU (the torch build's CUDA 13.0 recorded), so Q4's
    table is empty: report.html."""
    results = [r for r in mixed_results() if r.cell["epochs"] == 2]
    for r in results:
        r.env = dict(CPU_ENV)
    out = write_results(tmp_path_factory.mktemp("cpu"), results, planned=PENDING, study="cpu")
    write_report(collect(out))
    return (out / "report.html").read_text()


def test_the_report_reads_whole(cpu_report):
    assert reader_defects(cpu_report) == []
    assert '<p class="empty">No runs of 5+ epochs' in cpu_report and 'class="cite"' in cpu_report  # checked


BAD_REPORT = {
    "cells that never wrap": lambda p: p.replace("td { text-align: right;", "td { white-space: nowrap; text-align: right;"),
    "evidence 0-based": lambda p: re.sub(r"Evidence: table q1 rows 1, ", "Evidence: table q1 rows 0, ", p),
    "evidence past the table": lambda p: re.sub(r"Evidence: Table 1 rows ", "Evidence: Table 1 rows 9, ", p),
    "CUDA of the build": lambda p: p.replace(">not used (CPU run)</td></tr>\n  <tr><th style=\"text-align:left\">cuDNN",
                                              ">13.0</td></tr>\n  <tr><th style=\"text-align:left\">cuDNN"),
    "no reference list": lambda p: re.sub(r'<li id="ref-\d+"', "<li", p),
    "marker unlinked": lambda p: re.sub(r'<a class="cite" href="#ref-4">\[4\]</a>', "[4]", p, count=1),
    "name without reference": lambda p: re.sub(r' <a class="cite" href="#ref-3">\[3\]</a>', "", p, count=1),
    "empty table with units": lambda p: p.replace('<p class="empty">No runs of 5+',
                                                  '<p class="caption">Units: loss.</p>\n<p class="empty">No runs of 5+'),
}


@pytest.mark.parametrize("defect", BAD_REPORT)
def test_a_fabricated_report_of_each_defect_is_caught(cpu_report, defect):
    bad = BAD_REPORT[defect](cpu_report)
    assert bad != cpu_report, "the fabrication changed nothing"
    assert reader_defects(bad) != []


def test_speedup_plot_bars_the_repeats_and_draws_the_ideal_over_measured_counts(monkeypatch):
    """Table 1 measured at 1 and 2 GPUs: the ideal line spans N = 1..2 (not 4), and the 1-GPU point,
    which has three repeats, carries a bar from its min to its max."""
    import collect.train.plots as plots

    figures = []
    monkeypatch.setattr(plots, "png", lambda fig, tight=True: figures.append(fig) or b"png")
    t1 = pd.DataFrame([
        dict(engine="single", gpus=1, batch_per_gpu=128, nodes=1, pipeline="faithful", precision="fp32", speedup=1.0,
             t1_s=22.0, epoch_s=22.0, epoch_s_min=20.0, epoch_s_max=30.0),
        dict(engine="ddp", gpus=2, batch_per_gpu=128, nodes=1, pipeline="faithful", precision="fp32", speedup=2.0,
             t1_s=22.0, epoch_s=11.0, epoch_s_min=11.0, epoch_s_max=11.0)])
    assert plots.speedup(t1) == b"png"
    ax = figures[0].axes[0]
    ideal = next(line for line in ax.get_lines() if line.get_label().startswith("ideal"))
    assert list(ideal.get_xdata()) == [1, 2]
    bars = [c for c in ax.containers if c.has_yerr]
    segments = bars[0].lines[2][0].get_segments()
    one = segments[0]  # the 1-GPU point: 22 / 30 .. 22 / 20 around 1
    assert one[0][1] == pytest.approx(22 / 30) and one[1][1] == pytest.approx(22 / 20)


OVERFLOW = """<script>
window.addEventListener("load", () => {
  const out = document.createElement("pre");
  out.id = "overflow-check";
  out.textContent = JSON.stringify([...document.querySelectorAll("table")].filter(
    t => t.getBoundingClientRect().right > document.documentElement.clientWidth + 1).map(t => t.rows[0].innerText));
  document.body.appendChild(out);
});
</script>
</body>"""


def test_no_table_is_cut_at_1280_px(cpu_report, part_b, tmp_path):
    """In headless Chromium at 1280 px, every table of both reports ends inside the page."""
    binary = chromium_binary()
    for name, page in (("train", cpu_report), ("ptq", (part_b[0].parent / "report.html").read_text())):
        probe = tmp_path / f"{name}.html"
        probe.write_text(page.replace("</body>", OVERFLOW))
        dom = run_chromium(binary, tmp_path / "profile", "--window-size=1280,900", "--virtual-time-budget=5000",
                           "--dump-dom", probe.as_uri()).stdout
        found = re.search(r'<pre id="overflow-check">(.*?)</pre>', dom, re.S)
        assert found, "the probe script did not run"
        assert json.loads(html.unescape(found.group(1))) == [], name


@pytest.mark.parametrize("kind", ["train", "ptq"])
def test_answers_md_is_the_same_whichever_verb_wrote_it(tmp_path, kind):
    """TA3 29: plain `collect` wrote answers.md without a plot (Part B: without the accuracy-vs-bits plot),
    `collect --report` with them: one hand-in, two contents. Now both write the same file, its plots linked."""
    from tests.collect.dirs import write_mixed

    results = write_mixed(tmp_path / "r") if kind == "train" else write_ptq(tmp_path / "r")
    collect(results)
    plain = (results / "answers.md").read_text()
    links = re.findall(r"!\[[^\]]*\]\((plots/[a-z0-9_]+\.png)\)", plain)
    assert links and all((results / link).read_bytes().startswith(b"\x89PNG") for link in links)
    write_report(collect(results))
    assert (results / "answers.md").read_text() == plain
    if kind == "ptq":
        assert "plots/ptq_accuracy_vs_bits.png" in links
