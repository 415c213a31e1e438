"""The HTML report: self-contained (plots inline), the same content as the Markdown report,
and it renders in headless Chromium with every plot loaded (a screenshot, not only parsing)."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import jinja2
import pytest

from collect.report import collect, template_env, write_report
from tests.collect.browser import chromium_binary, run_chromium
from tests.collect.dirs import write_mixed

PROBE = """<script>
window.addEventListener("load", () => {
  const out = document.createElement("pre");
  out.id = "img-check";
  out.textContent = JSON.stringify([...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight]));
  document.body.appendChild(out);
});
</script>
</body>"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """The mixed dir with its report, written once in a dir of its own."""
    results = write_mixed(tmp_path_factory.mktemp("report"))
    write_report(collect(results))
    return results


def test_html_is_self_contained_with_five_plots(report):
    text = (report / "report.html").read_text()
    assert text.count('<img src="data:image/png;base64,') == 5  # Q4's two: training curves, test accuracy
    assert not re.search(r'(src|href)="(https?:|//)', text)  # nothing fetched from the network
    for title in ("Q1: one epoch on 1 GPU", "Table 1:", "Strong scaling", "Table 2:", "Table 3:", "Test accuracy and time",
                  "Q4:", "Environment"):
        assert title in text
    assert "T1 / TN" in text and "2(N-1)/N x P x 4" in text and "NVIDIA H200" in text
    assert '<td class="num status">OOM</td>' in text and "pending" in text and "not submitted" in text


def test_markdown_report_links_its_plots(report):
    text = (report / "report.md").read_text()
    links = re.findall(r"!\[[^\]]*\]\((plots/[a-z0-9_]+\.png)\)", text)
    assert len(links) == 5 and all((report / link).read_bytes().startswith(b"\x89PNG") for link in links)
    assert "## Table 3: communication bandwidth utilization" in text and "| 2 GPUs, DDP | 32 | 782 |" in text


def test_the_contents_links_every_section_and_no_word_is_doubled(report):
    """Every heading with an id (each answer, each table, the others, the environment) has its link in the
    contents, in the HTML and the Markdown; no word twice in a row ("table table1")."""
    html = (report / "report.html").read_text()
    contents = html[html.index('<h2 id="contents">'):html.index("</nav>")]
    ids = set(re.findall(r'<h[23] id="([^"]+)"', html)) - {"contents"}
    assert len(ids) > 10 and {i for i in ids if f'href="#{i}"' not in contents} == set()
    md = (report / "report.md").read_text()
    md_contents = md[md.index("## Contents"):md.index('<a id="', md.index("## Contents"))]
    assert {i for i in re.findall(r'<a id="([^"]+)"></a>', md) if f"(#{i})" not in md_contents} == set()
    prose = re.sub(r"data:image/png;base64,[^\"]+", "", html + md)
    prose = re.sub(r"<pre><code>.*?</code></pre>|```.*?```", "", prose, flags=re.S)  # quoted code (the job script)
    assert not re.findall(r"\b([A-Za-z]+)\s+\1\b", prose, re.IGNORECASE)


def test_templates_are_strict():
    env = template_env(True)
    assert env.undefined is jinja2.StrictUndefined
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("report.html.j2").render()


def test_report_renders_in_chromium_with_its_plots(report, tmp_path):
    from PIL import Image

    binary = chromium_binary()
    probe = tmp_path / "probe.html"
    probe.write_text((report / "report.html").read_text().replace("</body>", PROBE))
    dom = run_chromium(binary, tmp_path / "profile", "--virtual-time-budget=5000", "--dump-dom",
                       probe.as_uri()).stdout
    found = re.search(r'<pre id="img-check">(.*?)</pre>', dom, re.S)
    assert found, "the probe script did not run"
    images = json.loads(html.unescape(found.group(1)))
    assert len(images) == 5
    assert all(done and width >= 400 and height >= 200 for done, width, height in images), images

    shot = tmp_path / "report.png"
    run_chromium(binary, tmp_path / "profile", "--window-size=1280,4000", f"--screenshot={shot}",
                 (report / "report.html").as_uri())
    image = Image.open(shot).convert("RGB")
    assert image.size == (1280, 4000)
    colors = image.getcolors(maxcolors=1 << 20)
    white = max(count for count, _ in colors)
    assert len(colors) > 200, "the screenshot has almost no colors: blank?"
    assert white < 0.97 * image.size[0] * image.size[1], "the screenshot is almost all one color"
    plot_blue = sum(count for count, (r, g, b) in colors if b > 150 and r < 80 and 90 < g < 140)
    assert plot_blue > 500, "no plot colors in the screenshot"  # matplotlib's first color, #1f77b4


FOLD = """<script>
window.addEventListener("load", () => {
  const out = document.createElement("pre");
  out.id = "fold-check";
  const top = sel => { const e = document.querySelector(sel); return e ? e.getBoundingClientRect().bottom : -1; };
  out.textContent = JSON.stringify({contents: top("ol.contents"), answer: top("p.answer"), height: window.innerHeight});
  document.body.appendChild(out);
});
</script>
</body>"""


def probed(report: Path, script: str, out_id: str, tmp_path: Path):
    """What `script` (appended to the report's body) writes as JSON into <pre id=out_id>, in a 1280 x 800 window."""
    probe = tmp_path / f"{out_id}.html"
    probe.write_text(report.read_text().replace("</body>", script))
    dom = run_chromium(chromium_binary(), tmp_path / "profile", "--window-size=1280,800", "--virtual-time-budget=5000",
                       "--dump-dom", probe.as_uri()).stdout
    found = re.search(rf'<pre id="{out_id}">(.*?)</pre>', dom, re.S)
    assert found, "the probe script did not run"
    return json.loads(html.unescape(found.group(1)))


def test_the_contents_and_the_first_answer_are_above_the_fold(report, tmp_path):
    """In a 1280 x 800 window, the contents list and the whole first answer show before any scrolling."""
    where = probed(report / "report.html", FOLD, "fold-check", tmp_path)
    assert 0 < where["contents"] < where["answer"] <= where["height"], where
    text = (report / "report.html").read_text()
    assert text.index('<ol class="contents">') < text.index('<p class="answer">On NVIDIA H200, it takes 32.00 s')


SCROLL = """<script>
window.addEventListener("load", () => {
  const out = document.createElement("pre");
  out.id = "scroll-check";
  out.textContent = JSON.stringify([...document.querySelectorAll("div.scroll")]
    .filter(d => d.scrollWidth > d.clientWidth + 1).map(d => d.previousElementSibling.textContent.slice(0, 60)));
  document.body.appendChild(out);
});
</script>
</body>"""


def test_no_table_hides_columns_behind_a_scrollbar_at_1280_px(tmp_path):
    """Issue 44 class 8, TA4: the test-accuracy table of a DDP study (18 columns) ended behind a scrollbar at
    1280 px; a table of many columns is set in a smaller type, and none scrolls."""
    from jobs.train.result import DDPEvidence
    from tests.collect.dirs import hw5_results
    from tests.factories import write_results

    runs = hw5_results(repeats=3)
    for r in runs:
        if r.cell["engine"] == "ddp" and r.status == "ok":
            r.body.ddp_evidence = DDPEvidence(4, 44_695_848, 38_400, 44_734_256, True, 25, 1.0, 0.0, 0.169)
        if r.status == "ok":
            r.body.epochs[-1].test_images, r.body.epochs[-1].test_accuracy = 10_000, 0.9999
    results = write_results(tmp_path / "r", runs, study="hw5")
    write_report(collect(results))
    assert probed(results / "report.html", SCROLL, "scroll-check", tmp_path) == []
    assert 'class="wide"' in (results / "report.html").read_text()
