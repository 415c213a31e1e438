"""Text another user or a run can write (a result's error, a path) is shown as text: control
characters visibly on the console (results_format.text.visible), Markdown escaped in tables.md and
report.md (collect.render.md_text), as report.html escapes HTML."""
from __future__ import annotations

import pytest

from collect.render import Grid, md_text, to_markdown
from results_format.text import visible
from results_format.registry import Submission, append_entries
from tests.factories import cell, train_result, write_results
from tests.helpers import cli

ESCAPES = "\x1b]0;pwned\x07\x1b[2J\r\x9b6n\u202e"
HOSTILE = f"RuntimeError: {ESCAPES} <script>alert(1)</script> [click](javascript:alert(1)) <javascript:alert(2)>"


def test_visible_shows_each_control_character_as_its_escape():
    assert visible("a\x1b[2Jb\x07c\rd\x9be\u202ef\x7f") == "a\\x1b[2Jb\\x07c\\rd\\x9be\\u202ef\\x7f"
    assert visible("line 1\nline 2\tend é ✓") == "line 1\nline 2\tend é ✓"  # newlines, tabs and letters as they are


def test_md_text_leaves_no_html_and_no_link():
    text = md_text("<script>alert(1)</script> [x](javascript:alert(1)) a|b `c` \\ & \x1b\nd")
    assert "<" not in text and ">" not in text and "](" not in text.replace("\\](", "")
    assert text == ("&lt;script&gt;alert(1)&lt;/script&gt; \\[x\\](javascript:alert(1)) a\\|b \\`c\\` \\\\ &amp; "
                    "\\\\x1b d")  # rendered: \x1b d
    grid = Grid("k", "<b>T</b>", "[c](javascript:x)", ["<h>"], [["<i>x</i>"]], formulas=["a `b` c"])
    markdown = to_markdown(grid)
    assert "<" not in markdown and "](javascript" not in markdown.replace("\\]", "")
    assert "- `a 'b' c`" in markdown  # a formula stays a code span: a backtick cannot end it


@pytest.fixture
def hostile_dir(tmp_path):
    """A done cell and a failed one whose error holds escapes, HTML and links (its job gone)."""
    done, failed = cell(), cell(b=128)
    path = write_results(tmp_path / "runs", [train_result(done), train_result(failed, "failed", error=HOSTILE)])
    append_entries(path, [Submission(failed.cell_id, "local", "999999999", "n1-g1-t1", "2025-01-01T00:00:00+00:00")])
    return path


def test_status_shows_an_errors_escapes_visibly(hostile_dir, capsys):
    code, out, err = cli(capsys, "status", "--results", hostile_dir)
    assert "\x1b" not in out + err and "\x9b" not in out + err and "\u202e" not in out + err
    assert "\\x9b6n\\u202e" in "".join(out.split()), out  # the reason is the error's last line: after \r


def test_collect_prints_escapes_visibly_and_writes_no_html_or_link_into_markdown(hostile_dir, capsys):
    code, out, err = cli(capsys, "collect", "--results", hostile_dir, "--report", "--tables")
    assert code == 0, err
    assert "\x1b" not in out + err and "\x9b" not in out + err and "\\x9b6n" in "".join(out.split())
    for name in ("tables.md", "report.md"):
        text = (hostile_dir / name).read_text()
        assert "\x1b" not in text and "<script>" not in text, name
        assert "](javascript:" not in text.replace("\\]", ""), name  # \] is a bracket, not a link
        assert "<javascript:" not in text, name
    assert "&lt;script&gt;" in (hostile_dir / "report.md").read_text()


def test_an_error_line_shows_a_paths_escapes_visibly(tmp_path, capsys):
    code, _, err = cli(capsys, "collect", "--results", tmp_path / "x\x1b[2Jy")
    assert code == 2 and "\x1b" not in err and "x\\x1b[2Jy" in err


def test_a_lone_surrogate_nul_esc_and_carriage_return_are_shown_everywhere(tmp_path, capsys):
    """Issue 45 item 7: a lone surrogate (a file name that is not UTF-8) ended collect, --json and
    --report in UnicodeEncodeError; NUL and ESC reached report.html; \\r hid what came before it."""
    done, failed = cell(b=8), cell(b=64)  # Q1 names the failed batch and its error
    error = "OSError: cannot open b'\udcff.png' \x00\x1b[2J before\rafter"
    path = write_results(tmp_path / "runs", [train_result(done), train_result(failed, "failed", error=error)])
    append_entries(path, [Submission(failed.cell_id, "local", "999999999", "n1-g1-t1", "2025-01-01T00:00:00+00:00")])
    code, out, _ = cli(capsys, "status", "--results", path)
    assert "before\\rafter" in "".join(out.split())
    for extra in ((), ("--json",), ("--report",)):
        code, out, err = cli(capsys, "collect", "--results", path, *extra)
        assert code == 0 and not err, err
        out.encode()  # what a UTF-8 terminal or pipe must take
    html = (path / "report.html").read_text()
    assert "\x00" not in html and "\x1b" not in html and "\\udcff" in html and "\\x00" in html
