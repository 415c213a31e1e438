"""A diverged run reads at a glance: its loss in scientific notation (never 24350340314.7264), marked
"diverged" in the Q4 table and the plot's legend, and the loss plot on a log axis so the other
curves are not flattened to zero."""
from __future__ import annotations

import pytest

from collect.figures import spans_decades
from collect.render import number, seconds, signed
from collect.report import collect
from collect.train import plots
from tests.collect.dirs import HW5_Q4, write_hw5

DIVERGED = dict(HW5_Q4, linear=(24350340314.7264, 0.10))  # linear scaling's 5th-epoch loss: 2.435e+10


@pytest.mark.parametrize("value, digits, text", [
    (24350340314.7264, 4, "2.435e+10"),  # 11 digits before the point: scientific
    (813818.0, 4, "813818"),  # 6 digits: fixed, its decimals given up
    (123456.7, 2, "123457"),
    (21251.0, 2, "21251.0"),  # 5 + 1 digits
    (17.48, 2, "17.48"),
    (2.5179, 4, "2.5179"),
    (0.0014, 4, "0.0014"),
])
def test_a_figure_shows_at_most_six_significant_digits(value, digits, text):
    assert number(value, digits) == text
    assert signed(value, digits) == ("" if text.startswith("-") else "+") + text


def test_seconds_of_a_very_long_run_go_scientific():
    assert seconds(12345678.9) == "1.235e+07" and seconds(1234.5) == "1234.50"


@pytest.fixture(scope="module")
def diverged(tmp_path_factory):
    return collect(write_hw5(tmp_path_factory.mktemp("diverged"), q4=DIVERGED))


def test_a_diverged_run_is_marked_and_its_loss_scientific(diverged):
    (q4,) = [g for g in diverged.grids if g.key == "q4"]
    rows = {(r[1], r[3]): dict(zip(q4.header, r, strict=True)) for r in q4.rows}
    diverged = rows["2048", "linear LR scaling"]
    assert diverged["loss"] == "2.435e+10" and diverged["loss - baseline"] == "+2.435e+10"
    assert diverged["note"].startswith("diverged")
    assert not any("diverged" in row["note"] for key, row in rows.items() if key != ("2048", "linear LR scaling"))
    assert any("10 ln 10" in formula for formula in q4.formulas)


def test_the_loss_plot_goes_log_past_three_decades(diverged, tmp_path, monkeypatch):
    drawn = []
    monkeypatch.setattr(plots, "png", lambda fig, tight=True: drawn.append(fig) or b"")
    plots.q4_curves(diverged.tables["q4_curves"])
    loss_ax = drawn[-1].axes[0]
    assert loss_ax.get_yscale() == "log"
    assert any(t.get_text().endswith("(diverged)") for t in drawn[-1].legends[0].get_texts())
    plots.q4_curves(collect(write_hw5(tmp_path / "sound")).tables["q4_curves"])
    assert drawn[-1].axes[0].get_yscale() == "linear"
    assert not any(t.get_text().endswith("(diverged)") for t in drawn[-1].legends[0].get_texts())


def test_three_decades_is_the_bound():
    assert not spans_decades([0.5, 500.0]) and spans_decades([0.5, 500.1]) and not spans_decades([])
