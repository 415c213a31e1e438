"""Each cell of a results dir as one Run: its kind, its configuration (its fields but those its
repeats differ in), its status, and the figures a comparison reads (the kind's METRICS), taken
from the kind's own rows (collect.train.frame, collect.ptq.rows, collect.allreduce.rows): never
the JSON again."""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from collect.load import Loaded
from jobs.allreduce.cell import bytes_text
from jobs.core.kinds import cell_from_dict

REPEAT_FIELDS = {"train": ("repeat",), "ptq": ("seed", "repeat"), "allreduce": ("repeat",)}  # what repeats differ in


@dataclass(frozen=True)
class Metric:
    """A figure two sets are compared on: its name (with its unit), the words for people, and
    which way is better: -1 lower (a time), +1 higher (a rate, an accuracy), 0 neither."""

    name: str  # "epoch_s", "busbw_gbps 64 MiB", "accuracy Net W8A8"
    title: str  # "timed epoch"
    unit: str  # "s", "images/s", "GB/s", "%"
    better: int
    speed: bool  # a time or a rate: its change is "faster" or "slower"

    def word(self, direction: int) -> str:
        """The word for b against a, direction +1 (b above a) or -1: "slower", "faster", "higher", "lower"."""
        if self.speed and self.better:
            return "faster" if direction * self.better > 0 else "slower"
        return "higher" if direction > 0 else "lower"


TRAIN_METRICS = (
    Metric("epoch_s", "timed epoch", "s", -1, True),
    Metric("train_s", "train time", "s", -1, True),
    Metric("images_per_s", "images/s", "images/s", 1, True),
    Metric("test_accuracy", "test accuracy", "%", 1, False),
    Metric("busbw_gbps", "all-reduce busbw", "GB/s", 1, True),
    Metric("gpu_util_pct", "GPU utilization", "%", 0, False),
)
TRAIN_COLUMNS = {"epoch_s": "timed_epoch_s", "train_s": "timed_train_s", "images_per_s": "timed_images_per_s",
                 "busbw_gbps": "comm_busbw_gbps", "gpu_util_pct": "gpu_util_median_pct"}  # metric -> frame column


@dataclass(frozen=True)
class Run:
    """One cell of a set: kind, configuration (fields but REPEAT_FIELDS), status, and its figures by
    metric name (only those measured); headline: the metric that stands for its configuration."""

    kind: str
    fields: Mapping[str, Any]
    status: str
    values: Mapping[str, float] = field(default_factory=dict)
    headline: str = ""


@dataclass(frozen=True)
class Measured:
    """A set's runs, and every metric they name (by name, in the order first met)."""

    runs: tuple[Run, ...]
    metrics: Mapping[str, Metric]


def measured(loaded: Loaded) -> Measured:
    """Every cell of the loaded set as a Run, of every kind collect knows."""
    runs: list[Run] = []
    metrics: dict[str, Metric] = {}
    for kind, build in BUILDERS.items():
        cells = loaded.of_kind(kind)
        if cells:
            found, named = build(loaded)
            runs += found
            metrics.update(named)
    return Measured(tuple(runs), metrics)


def configuration(kind: str, cell: Mapping[str, Any]) -> dict[str, Any]:
    """A cell's fields, defaults filled in (a result written before a field was added has it), but
    its kind and the fields its repeats differ in."""
    fields = cell_from_dict(cell).to_dict()
    return {k: v for k, v in fields.items() if k != "kind" and k not in REPEAT_FIELDS[kind]}


def _figures(values: Mapping[str, Any]) -> dict[str, float]:
    """The figures that are there: numbers above 0 (a ratio needs them), NaN and None left out."""
    out = {}
    for name, value in values.items():
        number = float(value) if isinstance(value, int | float) else math.nan
        if math.isfinite(number) and number > 0:
            out[name] = number
    return out


def train_runs(loaded: Loaded) -> tuple[list[Run], dict[str, Metric]]:
    """Training: the timed epoch, train time, images/s, GPU utilization, busbw, and the test
    accuracy of the last epoch that has one (in %)."""
    from collect.train.frame import frames

    cells = loaded.of_kind("train")
    built = frames(cells)
    tested = built.epochs.dropna(subset=["test_accuracy"]).groupby("cell_id").test_accuracy.last()
    runs = []
    for c, row in zip(cells, built.frame.itertuples(index=False), strict=True):
        values = {name: getattr(row, column) for name, column in TRAIN_COLUMNS.items()}
        values["test_accuracy"] = 100 * tested.get(c.cell_id, math.nan)
        runs.append(Run("train", configuration("train", c.cell), c.status, _figures(values), "epoch_s"))
    return runs, {m.name: m for m in TRAIN_METRICS}


def ptq_runs(loaded: Loaded) -> tuple[list[Run], dict[str, Metric]]:
    """PTQ: each variant's test accuracy (in %); the headline is the last of the notebook's variants
    (the model the notebook builds up to)."""
    from collect.ptq.rows import ptq_rows

    cells = loaded.of_kind("ptq")
    rows = ptq_rows(cells)
    status = dict(zip(rows.cells.cell_id, rows.cells.status, strict=True))
    metrics: dict[str, Metric] = {}
    runs = []
    by_cell = dict(tuple(rows.variants.groupby("cell_id", sort=False)))
    for c in cells:
        variants = by_cell.get(c.cell_id, rows.variants.iloc[:0])
        values = {}
        for v in variants.itertuples(index=False):
            name = f"accuracy {v.name}"
            metrics.setdefault(name, Metric(name, f"accuracy, {v.name}", "%", 1, False))
            values[name] = 100 * v.accuracy
        notebook = variants[variants.role == "notebook"]
        headline = f"accuracy {notebook.name.iloc[-1]}" if len(notebook) else ""
        runs.append(Run("ptq", configuration("ptq", c.cell), status.get(c.cell_id, c.status), _figures(values), headline))
    return runs, metrics


def allreduce_runs(loaded: Loaded) -> tuple[list[Run], dict[str, Metric]]:
    """All-reduce: busbw at each message size; the headline is the largest size's (the link's plateau)."""
    from collect.allreduce.rows import allreduce_rows

    cells = loaded.of_kind("allreduce")
    rows = allreduce_rows(cells)
    status = dict(zip(rows.cells.cell_id, rows.cells.status, strict=True))
    metrics: dict[str, Metric] = {}
    runs = []
    by_cell = dict(tuple(rows.sizes.groupby("cell_id", sort=False)))
    for c in cells:
        sizes = by_cell.get(c.cell_id, rows.sizes.iloc[:0]).sort_values("bytes")
        values = {}
        for s in sizes.itertuples(index=False):
            name = f"busbw_gbps {bytes_text(int(s.bytes))}"
            metrics.setdefault(name, Metric(name, f"busbw at {bytes_text(int(s.bytes))}", "GB/s", 1, True))
            values[name] = s.busbw_gbps
        headline = f"busbw_gbps {bytes_text(int(sizes.bytes.iloc[-1]))}" if len(sizes) else ""
        runs.append(Run("allreduce", configuration("allreduce", c.cell), status.get(c.cell_id, c.status),
                        _figures(values), headline))
    return runs, metrics


BUILDERS: dict[str, Callable[[Loaded], tuple[list[Run], dict[str, Metric]]]] = {
    "train": train_runs, "ptq": ptq_runs, "allreduce": allreduce_runs}
