"""Each cell of a results dir as one Run (collect.comparable), built by its kind's own
KindTables.runs from the kind's rows: never the JSON again."""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from collect.comparable import Metric, Run
from collect.kinds import registry
from collect.cells import Loaded


@dataclass(frozen=True)
class RunSet:
    """A set's runs, and every metric they name (by name, in the order first met)."""

    runs: tuple[Run, ...]
    metrics: Mapping[str, Metric]


def measured(loaded: Loaded) -> RunSet:
    """Every cell of the loaded set as a Run, of every kind collect knows."""
    runs: list[Run] = []
    metrics: dict[str, Metric] = {}
    for name, kind in registry().items():
        if loaded.of_kind(name):
            found, named = kind.runs(loaded)
            runs += found
            metrics.update(named)
    return RunSet(tuple(runs), metrics)
