"""What a kind gives `collect --compare` (collect.compare): each cell as a Run with its figures, and
the Metrics they are compared on. Each kind builds its own from its rows (collect.<kind>.compare,
declared in its KindTables), so the comparison itself knows no kind."""
from __future__ import annotations

import math
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from jobs.core.kinds import cell_from_dict


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


@dataclass(frozen=True)
class Run:
    """One cell of a set: kind, configuration (its fields but those its repeats differ in), status, and its figures by
    metric name (only those measured); headline: the metric that stands for its configuration."""

    kind: str
    fields: Mapping[str, Any]
    status: str
    values: Mapping[str, float] = field(default_factory=dict)
    headline: str = ""


Runs = tuple[list[Run], dict[str, Metric]]  # a kind's runs and every metric they name


def no_runs(loaded: Any) -> Runs:
    """A kind with nothing to compare."""
    return [], {}


def configuration(cell: Mapping[str, Any], repeat_fields: Collection[str] = ("repeat",)) -> dict[str, Any]:
    """A cell's fields, defaults filled in (a result written before a field was added has it), but
    its kind and the fields its repeats differ in (each kind's own: repeat_fields)."""
    fields = cell_from_dict(cell).to_dict()
    return {k: v for k, v in fields.items() if k != "kind" and k not in repeat_fields}


def figures(values: Mapping[str, Any]) -> dict[str, float]:
    """The figures that are there: finite numbers >= 0 (a 0 is a figure: a diverged run's accuracy;
    collect.compare.table gives no ratio of it), NaN and None left out."""
    out = {}
    for name, value in values.items():
        number = float(value) if isinstance(value, int | float) else math.nan
        if math.isfinite(number) and number >= 0:
            out[name] = number
    return out
