"""The kinds of cell a study can hold, and the one interface the orchestrator needs of a cell.

A study holds cells of one kind. plan, submit, the registry and status use only StudyCell;
the job runs a cell through its kind's `run`; collect reads the kind from each result's cell
("kind" in its JSON; a cell without one is a training cell, as every result before kinds).
Adding a kind: a cell class with these members, a run(cell, out_dir, data_dir) -> status
function, an entry in KINDS, and its tables in collect/.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol
from collections.abc import Mapping

from jobs.allreduce.cell import AllreduceCell
from jobs.cell import TRAIN, Cell, CellError, kind_of
from jobs.ptq_cell import SWEPT, PTQCell


class StudyCell(Protocol):
    @property
    def kind(self) -> str: ...  # a key of KINDS

    @property
    def cell_id(self) -> str: ...  # a hash of to_dict(): the same cell has the same id anywhere

    @property
    def label(self) -> str: ...  # a human name; not unique

    @property
    def nodes(self) -> int: ...

    @property
    def gpus_per_node(self) -> int: ...

    @property
    def tasks_per_node(self) -> int: ...  # processes per node

    @property
    def gpus(self) -> int: ...

    @property
    def cpus_per_task(self) -> int: ...

    def plan_columns(self) -> dict[str, str]: ...  # what `plan` shows of it

    def estimate_s(self, images_per_s_per_gpu: float) -> float: ...  # one run's seconds, roughly

    def to_dict(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Kind:
    name: str
    cell: Any  # the cell class: from_dict(data) builds one, its fields are a study's keys
    run: str  # "module:function", imported in the job only (torch)
    swept: tuple[str, ...] = ()  # fields whose list in a study file is swept inside one cell, not expanded


KINDS = {
    TRAIN: Kind(TRAIN, Cell, "jobs.train:run"),
    "ptq": Kind("ptq", PTQCell, "jobs.ptq_job:run", swept=SWEPT),
    "allreduce": Kind("allreduce", AllreduceCell, "jobs.allreduce.run:run"),
}


def kind_named(name: Any) -> Kind:
    if name not in KINDS:
        raise CellError(f"kind must be one of {list(KINDS)}, got {name!r}")
    return KINDS[name]


def cell_from_dict(data: Mapping[str, Any]) -> StudyCell:
    """A cell of any kind from its JSON (no "kind": a training cell)."""
    return kind_named(kind_of(data)).cell.from_dict(data)


def run_cell(cell: StudyCell, out_dir: Path, data_dir: Path) -> str:
    """Run the cell with its kind's job; returns the result's status."""
    module, function = KINDS[cell.kind].run.split(":")
    return getattr(importlib.import_module(module), function)(cell, Path(out_dir), Path(data_dir))
