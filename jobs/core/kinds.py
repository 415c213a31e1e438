"""The kinds of study, each registered once, by the package that holds it.

A kind is a package: `jobs.<name>`, whose __init__ (torch-free) defines KIND, and
`collect.<name>` for its tables. The generic parts (plan, arrays, registry, submit, status,
the job envelope, collect's report) know a cell only through StudyCell and a result through
its envelope; they find a kind here, by the name in a cell's JSON (none: a training cell).
Packages are imported on first use, and a kind's package imports no torch, so the login
node's verbs (plan, submit, status) stay torch-free: the kind's run is a "module:function"
path imported in the job only.
"""
from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from collections.abc import Callable, Mapping, Sequence

from jobs.core.cell import StudyCell, check_choice, kind_of

# Adding a kind: its package name here, and nothing else on the job side.
PACKAGES = {"train": "jobs.train", "ptq": "jobs.ptq", "allreduce": "jobs.allreduce", "command": "jobs.command"}


@dataclass(frozen=True)
class Kind:
    name: str
    cell: Any  # the cell class: from_dict(data) builds one; its fields are a study's keys
    body: Any  # the result body class: from_json(result_data) reads its keys of a result, to_dict() writes them
    run: str  # "module:function", run(cell, out_dir, data_dir) -> status; imported in the job only (torch)
    swept: tuple[str, ...] = ()  # fields whose list in a study file is swept inside one cell, not expanded
    cpu_notes: tuple[str, ...] = ()  # what its job leaves out on a CPU, and why (`plan` says it where there is no GPU)
    user_fields: bool = False  # a study's keys its cell does not name are the user's own fields, not mistakes
    paths: tuple[str, ...] = ()  # fields naming a directory relative to the study file: made absolute at plan time
    script: Callable[[Sequence[Mapping[str, Any]]], tuple[str, ...]] = lambda cells: ()  # the modules besides run's
    # that a hand-in prints as the job's code for these planned cells (field dicts): the loop itself, not only the
    # dispatcher, and the code of each measurement its answers use


@functools.cache
def kinds() -> dict[str, Kind]:
    found = {name: importlib.import_module(package).KIND for name, package in PACKAGES.items()}
    for name, kind in found.items():
        assert kind.name == name, f"{PACKAGES[name]}.KIND is named {kind.name!r}, registered as {name!r}"
    return found


def kind_named(name: Any) -> Kind:
    return kinds()[check_choice("kind", name, tuple(PACKAGES))]


def cell_from_dict(data: Mapping[str, Any]) -> StudyCell:
    """A cell of any kind from its JSON (no "kind": a training cell)."""
    return kind_named(kind_of(data)).cell.from_dict(data)


def run_cell(cell: StudyCell, out_dir: Path, data_dir: Path) -> str:
    """Run the cell with its kind's job; returns the result's status."""
    module, function = kind_named(cell.kind).run.split(":")
    return getattr(importlib.import_module(module), function)(cell, Path(out_dir), Path(data_dir))
