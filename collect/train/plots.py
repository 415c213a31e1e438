"""The report's plots as PNG bytes (matplotlib, Agg backend: no display needed).

Each function takes a table from collect.train.tables and returns the PNG, or None when the table
has nothing to plot yet.
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Optional

import pandas as pd

import collect.train.formulas as f
from collect.figures import COLORS, plt, png, spans_decades
from collect.train.grids import ENGINE_NAMES, T1N_BREAKS, launch_name, remedy_name, setup_name
from collect.train.tables import Q4_EPOCH, on_cpu
KEYS = ["engine", "nodes", "gpus_per_node", "batch_per_gpu", "lr_scaling", "warmup_epochs", "sync_bn"]




def variants(table: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """One series per pipeline and precision, when a study has several ("" suffix otherwise)."""
    combos = table.groupby(["pipeline", "precision"], sort=True)
    if combos.ngroups <= 1:
        return [("", table)]
    return [(f" ({pipeline}, {precision})", group) for (pipeline, precision), group in combos]


def epoch_time(q1: pd.DataFrame) -> Optional[bytes]:
    """Q1: train time and epoch time against batch size on 1 GPU; OOM batches marked."""
    ok = q1[q1.status == "ok"]
    if ok.empty:
        return None
    fig, ax = plt.subplots(figsize=(6.4, 3.8))
    for i, (suffix, group) in enumerate(variants(ok)):
        color = COLORS[2 * i % len(COLORS)], COLORS[(2 * i + 1) % len(COLORS)]
        ax.errorbar(group.batch_per_gpu, group.epoch_s, yerr=spread(group, "epoch_s"), fmt="o-", capsize=3,
                    color=color[0], label="epoch time (data loading included)" + suffix)
        ax.errorbar(group.batch_per_gpu, group.train_s, yerr=spread(group, "train_s"), fmt="s--", capsize=3,
                    color=color[1], label="train time (no data wait: the Q1 figure)" + suffix)
    top = max(ok.epoch_s.max(), ok.train_s.max())
    for r in q1[q1.status != "ok"].itertuples(index=False):
        ax.plot([r.batch_per_gpu], [top], "x", color="red", markersize=10)
        ax.annotate(r.status.upper() if r.status == "oom" else r.status, (r.batch_per_gpu, top),
                    textcoords="offset points", xytext=(0, 8), ha="center", color="red")
    ax.set_xscale("log", base=2)
    ax.set_xticks(sorted(q1.batch_per_gpu.unique()), [str(b) for b in sorted(q1.batch_per_gpu.unique())])
    ax.set_ylim(0, top * 1.25)
    ax.set(xlabel=f"batch size (1 GPU); {BARS}", ylabel="seconds per epoch", title="Q1: epoch time vs batch size")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower left", fontsize=8)
    return png(fig)


BARS = "bars: min-max over repeats"


def spread(rows: pd.DataFrame, column: str) -> list[list[float]]:
    """Error bars of a ranged column: from its min to its max around the median (0 where one run)."""
    low = (rows[column] - rows.get(f"{column}_min", rows[column])).fillna(0).clip(lower=0)
    high = (rows.get(f"{column}_max", rows[column]) - rows[column]).fillna(0).clip(lower=0)
    return [list(low), list(high)]


def speedup_points(group: pd.DataFrame, one: Optional[pd.Series]) -> tuple[list, list, list[list[float]]]:
    """A speedup line's points from N = 1: (N, T1 / TN, its bars). The bars are TN's spread over its
    repeats with T1 at its median (speedup min = T1 / max TN); at N = 1, the 1-GPU run's own spread."""
    rows = group.sort_values("gpus")
    gpus, value = list(rows.gpus), list(rows.speedup)
    low = list(rows.speedup - (rows.t1_s / rows.epoch_s_max).fillna(rows.speedup))
    high = list((rows.t1_s / rows.epoch_s_min).fillna(rows.speedup) - rows.speedup)
    if one is not None:
        gpus, value = [1] + gpus, [1.0] + value
        low = [1 - one.epoch_s / one.epoch_s_max] + low
        high = [one.epoch_s / one.epoch_s_min - 1] + high
    return gpus, value, [[max(v, 0.0) for v in low], [max(v, 0.0) for v in high]]


MARKERS = ("^", "D", "v")  # hollow, one per reason a point is set apart (marks' values, in order met)


def speedup(t1: pd.DataFrame, marks: Optional[Mapping[int, str]] = None) -> Optional[bytes]:
    """Speedup against GPUs, one panel per engine, one line per batch per GPU with min-max bars; the
    ideal y = N over the GPU counts measured only. DataParallel on a CPU is one process, no N-worker speedup
    (as the Q2 answer says, TA3 8): not drawn. `marks` (Table 1's row -> why, answers_speedup.plot_marks): the
    points the Q2 answer sets apart, ringed by a hollow marker per reason, with a legend entry (TA8 16)."""
    t1, marks = t1.reset_index(drop=True), marks or {}
    shapes = {why: MARKERS[i % len(MARKERS)] for i, why in enumerate(dict.fromkeys(marks.values()))}
    one_process = (t1.engine == "dp") & t1.get("gpu_model", pd.Series("", index=t1.index)).map(on_cpu)
    multi = t1[(t1.engine != "single") & t1.speedup.notna() & ~one_process]
    if multi.empty:
        return None
    engines = [e for e in ("dp", "ddp") if e in set(multi.engine)]
    lines = max(len(multi[multi.engine == e].groupby(["batch_per_gpu", "nodes"])) for e in engines) + 1
    fig, axes = plt.subplots(1, len(engines), figsize=(5.2 * len(engines), 3.8 + 0.2 * lines), squeeze=False)
    counts = sorted({1, *map(int, multi.gpus)})
    most = counts[-1]
    singles = t1[t1.engine == "single"]
    for ax, engine in zip(axes[0], engines, strict=True):
        rows = multi[multi.engine == engine]
        ax.plot(counts, counts, "k:", label="ideal (speedup = N)")
        series = [(suffix, key, g) for suffix, part in variants(rows) for key, g in part.groupby(["batch_per_gpu", "nodes"])]
        for i, (suffix, (batch, nodes), group) in enumerate(series):
            one = singles[(singles.batch_per_gpu == batch) & (singles.pipeline == group.pipeline.iloc[0])
                          & (singles.precision == group.precision.iloc[0])]
            gpus, value, bars = speedup_points(group, one.iloc[0] if len(one) else None)
            ax.errorbar(gpus, value, yerr=bars, fmt="o-" if nodes == 1 else "s--", capsize=3,
                        color=COLORS[i % len(COLORS)], label=series_label(batch, group) + suffix)
            for r in group.itertuples(index=False):
                note = above_ideal(r, one.iloc[0] if len(one) else None)
                if note:
                    ax.annotate(note, (r.gpus, r.speedup), textcoords="offset points", xytext=(6, -12), fontsize=7,
                                bbox=dict(fc="white", ec="none", alpha=0.8))
        for why, shape in shapes.items():
            at = rows[[marks.get(int(i)) == why for i in rows.index]]
            if len(at):
                ax.plot(at.gpus, at.speedup, shape, markersize=11, markerfacecolor="none", markeredgecolor="black",
                        linestyle="none", label=f"set apart: {why}")
        ax.set(xlabel=f"GPUs (N); {BARS}", ylabel="speedup T1 / TN", title=f"{ENGINE_NAMES[engine]}: speedup vs GPUs")
        ax.set_xticks(counts)
        ax.set_xlim(0.8, most + 0.2)
        ax.set_ylim(0, most + 0.5)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), frameon=False)  # below: no point hidden
    return png(fig)


def series_label(batch: int, group: pd.DataFrame) -> str:
    """"b=32/GPU", and a multi-node series named as the tables name it: "4 GPUs on one host (launched as 2 x 2)"
    where its runs had fewer hosts than nodes (TA3 13: not "2 nodes")."""
    first = group.iloc[0]
    nodes = int(first.nodes)
    if nodes < 2:
        return f"b={batch}/GPU"
    return f"b={batch}/GPU, {launch_name(nodes, int(first.gpus_per_node), int(getattr(first, 'hosts_seen', 0) or 0))}"


def above_ideal(r, one: Optional[pd.Series]) -> str:
    """The caveat the Q2 answer gives a speedup above N, beside its point: a single run on either side is no
    evidence of it (TA3 13); over repeats, where TN's slowest run's speedup is not above N, nor is the point."""
    if not r.speedup > r.gpus:
        return ""
    if int(getattr(r, "repeats", 1)) < 2 or one is None or int(one.get("repeats", 1)) < 2:
        return "single run: no evidence above ideal"
    return "" if r.t1_s / r.epoch_s_max > r.gpus else "within its runs' spread"


def short_name(r) -> str:
    """"4 GPUs" over "DDP" over "b=32", for a crowded axis; "4 GPUs" over "DDP 2x2" over "1 host" where the runs
    of 2 nodes had one host (the tables' "4 GPUs on one host (launched as 2 x 2)"): short lines, as one long
    line ran into the next bar's (TA4 21)."""
    hosts = int(getattr(r, "hosts_seen", 0) or 0)
    engine = "DP" if r.engine == "dp" else ENGINE_NAMES[r.engine]
    where = f"{r.gpus} GPUs\n{engine}"
    if r.nodes > 1:
        where += f" {r.nodes}x{r.gpus_per_node}" + (f"\n{hosts} host{'s' * (hosts > 1)}" if 0 < hosts < r.nodes else "")
    return f"{where}\nb={r.batch_per_gpu}"


BAR_INCHES, TICK_POINTS = 0.8, 10  # per configuration on Table 2's plot, and its labels' size


def compute_comm(t2: pd.DataFrame) -> Optional[bytes]:
    """Table 2 as bars: the estimate (compute T1/N, communication TN - T1/N) and, where the job
    measured it, the measured split beside it."""
    rows = t2[(t2.status == "ok") & t2.compute_est_s.notna()]
    if rows.empty:
        return None
    labels = [short_name(r) for r in rows.itertuples(index=False)]
    x = list(range(len(rows)))
    measured = rows.comm_measured_s.notna().any()
    width = 0.38 if measured else 0.6
    shift = -width / 2 if measured else 0.0
    fig, ax = plt.subplots(figsize=(max(6.4, BAR_INCHES * len(rows) + 2), 4.6))
    est_x = [i + shift for i in x]
    ax.bar(est_x, rows.compute_est_s, width, color=COLORS[0], label="compute, estimate T1/N")
    breaks = rows.t1n_breaks.astype(bool).to_numpy()  # Table 2's "T1/N breaks": TN - T1/N is no communication
    comm = rows.comm_est_s.clip(lower=0).where(~breaks, 0.0)
    ax.bar(est_x, comm, width, bottom=rows.compute_est_s, color=COLORS[1], label="communication, estimate TN - T1/N"
           + (f" (none where {T1N_BREAKS}: compute measured far from T1/N)" if breaks.any() else ""))
    ranged = (rows.train_s_max > rows.train_s_min).to_numpy() & ~breaks  # no bar on a single run, nor on no estimate
    if ranged.any():
        ax.errorbar([x for x, r in zip(est_x, ranged, strict=True) if r], (rows.compute_est_s + comm)[ranged],
                    yerr=spread(rows[ranged], "train_s"), fmt="none", ecolor="black", capsize=3, label=f"TN's {BARS}")
    if measured:
        m_x = [i + width / 2 for i in x]
        ax.bar(m_x, rows.compute_measured_s.fillna(0), width, color=COLORS[0], alpha=0.5, hatch="//",
               label="compute, measured")
        ax.bar(m_x, rows.comm_measured_s.fillna(0), width, bottom=rows.compute_measured_s.fillna(0),
               color=COLORS[1], alpha=0.5, hatch="//", label="communication, measured")
    for i, value in zip(est_x, rows.comm_est_s, strict=True):
        if not math.isnan(value) and value < 0:
            ax.annotate("comm est. < 0", (i, 0), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7)
    for i, top, broken in zip(est_x, rows.compute_est_s, breaks, strict=True):
        if broken:
            ax.annotate(T1N_BREAKS, (i, top), textcoords="offset points", xytext=(0, 3), ha="center", fontsize=7)
    ax.set_xticks(x, labels, fontsize=TICK_POINTS)
    ax.set(ylabel="seconds per epoch", title="Table 2: compute vs communication")
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=9)
    return png(fig)


def q4_runs(curves: pd.DataFrame) -> list[tuple[str, dict, pd.DataFrame]]:
    """Each Q4 run's (legend label, line style, its rows by epoch); the 1-GPU baseline first, in black."""
    runs = sorted(curves.groupby(KEYS, sort=True), key=lambda kv: kv[1].iloc[0].engine != "single")
    out = []
    for i, (_, run) in enumerate(runs):
        first = run.iloc[0]
        base = first.engine == "single"
        fifth = run.loss[run.epoch == Q4_EPOCH]  # the Q4 table's epoch: one rule, one verdict a run (TA4 12)
        label = f"{setup_name(first)}, b={first.batch_per_gpu}" + (
            " (baseline)" if base else f", remedy: {remedy_name(first)}") + (
            " (diverged)" if len(fifth) and f.diverged(fifth.iloc[0]) else "")
        style = dict(color="black", linewidth=2.2) if base else dict(color=COLORS[i % len(COLORS)])
        out.append((label, style, run.sort_values("epoch")))
    return out


def q4_curves(curves: pd.DataFrame) -> Optional[bytes]:
    """Q4: training loss and accuracy per epoch of each run; the 1-GPU baseline in black."""
    if curves.empty:
        return None
    runs = q4_runs(curves)
    legend_rows = math.ceil(len(runs) / 2)
    height = 4.0 + 0.22 * legend_rows
    fig, (loss_ax, acc_ax) = plt.subplots(1, 2, figsize=(10.5, height))
    for label, style, run in runs:
        loss_ax.plot(run.epoch, run.loss, "o-", label=label, **style)
        acc_ax.plot(run.epoch, 100 * run.accuracy, "o-", label=label, **style)
    loss_ax.set(xlabel="epoch", ylabel="training loss", title="Q4: training loss per epoch")
    if spans_decades(curves.loss.dropna()):
        loss_ax.set_yscale("log")
        loss_ax.set_ylabel("training loss (log scale)")
    acc_ax.set(xlabel="epoch", ylabel="training accuracy (%)", title="Q4: training accuracy per epoch")
    for ax in (loss_ax, acc_ax):
        ax.grid(alpha=0.3)
        ax.set_xticks(sorted(curves.epoch.unique()))
    return legend_below(fig, loss_ax, legend_rows, height)


def legend_below(fig, ax, rows: int, height: float) -> bytes:
    """The figure's PNG with the legend of `ax` in two columns beneath the axes, inside the figure: a legend
    hung below an axis (bbox_to_anchor) is cut at the figure's edges (TA4 class 8)."""
    fig.tight_layout()
    handles, labels = ax.get_legend_handles_labels()
    fig.subplots_adjust(bottom=(0.22 * rows + 0.6) / height)  # inches of legend and x label
    fig.legend(handles, labels, loc="lower center", ncol=2, fontsize=8, frameon=False)
    return png(fig, tight=False)


def q4_test_accuracy(curves: pd.DataFrame) -> Optional[bytes]:
    """Q4: test accuracy after each epoch of each run that recorded it; the 1-GPU baseline in black."""
    curves = curves[curves.test_accuracy.notna()] if "test_accuracy" in curves else curves.iloc[0:0]
    if curves.empty:
        return None
    runs = q4_runs(curves)
    legend_rows = math.ceil(len(runs) / 2)
    height = 4.0 + 0.22 * legend_rows
    fig, ax = plt.subplots(figsize=(10.5, height))
    for label, style, run in runs:
        ax.plot(run.epoch, 100 * run.test_accuracy, "o-", label=label, **style)
    ax.set(xlabel="epoch", ylabel="test accuracy (%)", title="Q4: test accuracy after each epoch")
    ax.set_xticks(sorted(curves.epoch.unique()))
    ax.grid(alpha=0.3)
    return legend_below(fig, ax, legend_rows, height)  # below: no curve hidden
