"""What collect reads of a results dir, as data: every cell of any kind (KindCell) and the whole read
(Loaded). Made by collect.load; read by collect.kinds and each kind's tables (no function here reads a file)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from collect.spent_json import SPENT_COLUMNS

ENV_KEYS = ("gpu_model", "gpus_visible", "driver", "torch", "cuda", "cudnn", "nccl", "python", "device",
            "cells_beside")
ENVELOPE_COLUMNS = (["kind", "cell_id", "status", "error", "hosts", "started_at", "ended_at", "gpu_model"]
                    + [f"env_{k}" for k in ENV_KEYS if k != "gpu_model"])


@dataclass(frozen=True, slots=True)
class KindCell:
    """A cell of any kind, whole: its fields, its status (its result's, else pending, skipped or
    not submitted) and, when it has a result, what its kind's tables keep of it (`kept`: collect.kinds.
    KindTables.keep, the Result or less of it: a study may hold 100,000), made as the file was read."""

    kind: str
    cell_id: str
    cell: dict[str, Any]
    status: str
    kept: Any = None


@dataclass(frozen=True)
class Loaded:
    """study: the plan's name (None without a plan); cells: every cell of every kind, each result
    file's (in file order), then each planned cell without one (in plan order); envelopes: one row
    per cell, in that order (ENVELOPE_COLUMNS and the entries each kind adds: KindTables.environment);
    results_dir: where they were read (a kind may read a few files again: collect.ptq.rows)."""

    study: Optional[str]
    cells: tuple[KindCell, ...] = ()
    spent: pd.DataFrame = dataclasses.field(default_factory=lambda: pd.DataFrame(columns=SPENT_COLUMNS))  # collect.spent_json
    envelopes: pd.DataFrame = dataclasses.field(default_factory=lambda: pd.DataFrame(columns=ENVELOPE_COLUMNS))
    results_dir: Optional[Path] = None

    def kinds(self) -> list[str]:
        """The kinds of the cells, in the order first seen."""
        return list(dict.fromkeys(c.kind for c in self.cells))

    def of_kind(self, kind: str) -> tuple[KindCell, ...]:
        return tuple(c for c in self.cells if c.kind == kind)
