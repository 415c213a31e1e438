"""`collect --compare`'s sinks escape what the other set's files say (often a labmate's dir) through
the one escape of each sink: collect.render.console_text on the console, md_text in compare.md."""
from __future__ import annotations

from tests.collect.dirs import JITTER, SINGLE
from tests.factories import cell, train_result, write_results
from tests.helpers import cli

HOSTILE = ("2.5.1\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J<script>alert(1)</script>\n# heading "
           "[x](javascript:alert(1)) ![t](https://evil.example/t.png)")


def test_a_hostile_environment_reaches_no_sink_raw(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "100")
    env = {"gpu_model": "GPU\x1b[31m", "torch": HOSTILE, "hostnames": ["n1"]}
    a = write_results(tmp_path / "a", [train_result(cell(repeat=r, **SINGLE), epoch_s=10 * JITTER[r], env=env)
                                       for r in range(3)])
    b = write_results(tmp_path / "b", [train_result(cell(repeat=r, **SINGLE), epoch_s=10 * JITTER[r]) for r in range(3)])
    code, out, err = cli(capsys, "collect", "--results", b, "--compare", a, "--report", "--out", tmp_path / "out")
    assert code == 0, err
    assert "\x1b" not in out + err and "\x07" not in out and "\\x1b]52" in out
    md = (tmp_path / "out" / "compare.md").read_text()
    for raw in ("\x1b", "<script>", "\n# heading", "[x](javascript:", "![t](https:"):
        assert raw not in md, raw
    assert "&lt;script&gt;" in md and "cm0gLXJmIH4=" in md
