"""The PTQ report's plots as PNG bytes (matplotlib, Agg), in collect.train.plots' style: accuracy
against bits for every choice of the sweep, and the weight and activation histograms per layer
with their ranges marked. Each returns None when there is nothing to plot."""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import pandas as pd

from collect.figures import COLORS, png, plt  # the report's one style
from collect.ptq.tables import method_text


LINESTYLES = ("-", "--", ":", "-.")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")


@dataclass(frozen=True)
class Style:
    color: str
    linestyle: str
    marker: str


def series_styles(rows: pd.DataFrame) -> dict[tuple[str, str], Style]:
    """Each (setup, choice) of one part of the sweep drawn apart from every other, so the pairs an answer
    compares can be told apart: colour by range method, line style and marker by the choice's other half
    (granularity for weights, calibration images for activations), the marker by setup too.
    Example: "max, 400 images" and "MSE-optimal, 4000 images" differ in colour and in line style."""
    weights = rows.activation_bits.isna()
    method = rows.weight_method.where(weights, rows.activation_method).astype(str)
    other = rows.granularity.where(weights, rows.calibration_images.astype(str)).astype(str)
    keys = list(dict.fromkeys(zip(rows.setup, rows.choice, method, other, strict=True)))
    methods = list(dict.fromkeys(k[2] for k in keys))
    others = list(dict.fromkeys(k[3] for k in keys))
    setups = list(dict.fromkeys(k[0] for k in keys))

    def marker(setup: str, o: str) -> str:
        return MARKERS[(setups.index(setup) * len(others) + others.index(o)) % len(MARKERS)]

    return {(setup, choice): Style(COLORS[methods.index(m) % len(COLORS)], LINESTYLES[others.index(o) % len(LINESTYLES)],
                                   marker(setup, o)) for setup, choice, m, o in keys}


def accuracy_vs_bits(sweep: pd.DataFrame, notebook: pd.DataFrame) -> Optional[bytes]:
    """Two panels (weights only; 8-bit weights with quantized activations): top-1 accuracy
    against bits, one line per choice (median over seeds, min-max as error bars; series_styles), the
    float Net's median as a black dashed line."""
    parts = [p for p in ("weights", "activations") if (sweep.part == p).any()]
    if not parts:
        return None
    most = max(rows.groupby(["setup", "choice"]).ngroups for _, rows in sweep.groupby("part"))
    fig, axes = plt.subplots(1, len(parts), figsize=(6.0 * len(parts), 4.0 + 0.2 * math.ceil(most / 2) + 0.6),
                             squeeze=False)
    base = notebook[(notebook.model == "Net") & ~notebook.quantized.astype(bool)]
    for ax, part in zip(axes[0], parts, strict=True):
        rows = sweep[sweep.part == part]
        styles = series_styles(rows)
        for (setup, choice), line in rows.groupby(["setup", "choice"], sort=False):
            line, style = line.sort_values("bits"), styles[setup, choice]
            bits = line.bits.astype(int)
            low, high = 100 * (line.accuracy - line.accuracy_min), 100 * (line.accuracy_max - line.accuracy)
            ax.errorbar(bits, 100 * line.accuracy, yerr=[low, high], color=style.color, linestyle=style.linestyle,
                        marker=style.marker, capsize=3, markersize=4, label=choice + (f" [{setup}]" if setup else ""))
        for r in base.itertuples(index=False):
            ax.axhline(100 * r.accuracy, color="black", linestyle="--", linewidth=1.2,
                       label="float Net" + (f" [{r.setup}]" if r.setup else ""))
        ticks = sorted({int(b) for b in rows.bits})
        ax.set_xticks(ticks, [str(b) for b in ticks])
        ax.invert_xaxis()  # 8 bits on the left, as the tables read
        title = "weights only (activations float)" if part == "weights" else "8-bit weights, activations quantized"
        ax.set(xlabel="weight bits" if part == "weights" else "activation bits", ylabel="top-1 test accuracy (%)",
               title=f"Accuracy vs bits: {title}")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, frameon=False,
                  handlelength=4)  # long enough to show each series' line style
    return png(fig)


def histograms(hists: pd.DataFrame, which: str) -> Optional[bytes]:
    """One panel per layer: the histogram of one seed's values, the actual range [min, max]
    (solid), mean +/- 3 std (dashed) and the chosen symmetric clip range +/- r (dotted)."""
    rows = hists[hists.which == which]
    if rows.empty:
        return None
    rows = rows[rows.setup == rows.setup.iloc[0]]  # one setup: the first
    columns = min(3, len(rows))
    lines = math.ceil(len(rows) / columns)
    height = 3.0 * lines + 0.8  # inches: the panels, the title above and the legend below
    fig, axes = plt.subplots(lines, columns, figsize=(4.2 * columns, height), squeeze=False)
    for ax, r in zip(axes.flat, rows.itertuples(index=False), strict=False):
        ax.stairs(r.counts, r.edges, fill=True, color=COLORS[0], alpha=0.75)
        ax.axvline(r.min, color="red", linewidth=1.2, label="range [min, max]")
        ax.axvline(r.max, color="red", linewidth=1.2)
        ax.axvline(r.sigma3_low, color="darkorange", linestyle="--", linewidth=1.2, label="mean +/- 3 std")
        ax.axvline(r.sigma3_high, color="darkorange", linestyle="--", linewidth=1.2)
        if not pd.isna(r.range):
            ax.axvline(-r.range, color="green", linestyle=":", linewidth=1.6, label=f"clip +/- r ({method_text(r.method, None)})")
            ax.axvline(r.range, color="green", linestyle=":", linewidth=1.6)
        if which == "activations":
            ax.set_yscale("log")  # ReLU outputs: a spike at 0 over a long tail
        ax.set(title=f"{r.layer}: [{r.min:.3g}, {r.max:.3g}]", xlabel="value", ylabel="count")
        ax.locator_params(axis="x", nbins=5)
        ax.grid(alpha=0.3)
    for ax in list(axes.flat)[len(rows):]:
        ax.set_visible(False)
    first = rows.iloc[0]
    handles, labels = axes.flat[0].get_legend_handles_labels()
    what = "Net's weights" if which == "weights" else "Net's input and layer outputs (calibration images)"
    fig.suptitle(f"{what}, training seed {first.training_seed}")
    fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.4 / height, 1, 1 - 0.1 / height))
    return png(fig, tight=False)


def build(built: dict[str, pd.DataFrame]) -> dict[str, Optional[bytes]]:
    """Each plot by the key of the grid it follows in the report."""
    return {
        "ptq_weights": histograms(built["ptq_histograms"], "weights"),
        "ptq_activations": histograms(built["ptq_histograms"], "activations"),
        "ptq_sweep_activations": accuracy_vs_bits(built["ptq_sweep"], built["ptq_notebook"]),
    }
