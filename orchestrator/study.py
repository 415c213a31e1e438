"""Study files (TOML) -> a validated Study -> its cells (pure and deterministic).

A study holds the cluster's node shape and request ([cluster]), cell fields shared by
every grid ([defaults]), and grids ([[grid]]): each list-valued key in a grid is
expanded as a Cartesian product. A cell that two grids both produce is run once.
"""
from __future__ import annotations

import dataclasses
import itertools
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from jobs.cell import Cell, CellError
from orchestrator.cluster import GPU_REQUESTS, ClusterSpec, ContainerSpec, build_specs, load_profile  # noqa: F401
from orchestrator.errors import StudyError

STUDIES_DIR = Path(__file__).parent / "studies"
_CELL_FIELDS = {f.name for f in dataclasses.fields(Cell)}
_TOP_KEYS = {"name", "description", "data_dir", "profile", "repeats", "cluster", "container", "defaults", "grid"}
_GRID_KEYS = _CELL_FIELDS | {"name", "repeats"}
@dataclass(frozen=True)
class Study:
    name: str
    description: str
    data_dir: str
    cluster: ClusterSpec
    cells: tuple[Cell, ...]
    source: str  # the TOML text, kept with the plan
    container: ContainerSpec = ContainerSpec()
    profile: str = ""  # the cluster profile's name; "" for none


def available_studies() -> list[str]:
    return sorted(p.stem for p in STUDIES_DIR.glob("*.toml"))


def find_study(name_or_path: str) -> Path:
    """A shipped study by name, or a TOML file by path."""
    path = Path(name_or_path)
    if path.suffix == ".toml" or path.exists():
        if not path.is_file():
            raise StudyError(f"study file {path} does not exist")
        return path
    shipped = STUDIES_DIR / f"{name_or_path}.toml"
    if not shipped.is_file():
        raise StudyError(
            f"unknown study {name_or_path!r}; shipped studies: {', '.join(available_studies())} "
            "(or give the path of a .toml file)"
        )
    return shipped


def load_study(name_or_path: str, profile: Optional[str] = None) -> Study:
    """A study file, over the cluster profile it names (or `profile`, which wins)."""
    path = find_study(name_or_path)
    text = path.read_text()
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise StudyError(f"{path}: not valid TOML: {exc}") from exc
    try:
        return parse_study(data, text, default_name=path.stem, profile=profile)
    except StudyError as exc:
        raise StudyError(f"{path}: {exc}") from exc


def parse_study(data: dict[str, Any], source: str = "", default_name: str = "study",
                profile: Optional[str] = None) -> Study:
    _reject_unknown("the top level", data, _TOP_KEYS)
    name = data.get("name", default_name)
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise StudyError(f"name must be letters, digits and _.- only, got {name!r}")
    description = data.get("description", "")
    data_dir = data.get("data_dir", "data")
    if not isinstance(description, str) or not isinstance(data_dir, str):
        raise StudyError("description and data_dir must be strings")
    profile_name = profile or data.get("profile", "")
    if not isinstance(profile_name, str):
        raise StudyError(f"profile must be a profile's name or a .toml path, got {profile_name!r}")
    chosen = load_profile(profile_name)
    cluster, container = build_specs(chosen, _table("cluster", data.get("cluster", {})),
                                      _table("container", data.get("container", {})))
    defaults = _table("defaults", data.get("defaults", {}))
    _reject_unknown("[defaults]", defaults, _CELL_FIELDS)
    grids = data.get("grid", [])
    if not isinstance(grids, list) or not grids:
        raise StudyError("a study needs at least one [[grid]] table")
    study_repeats = _repeats("repeats", data.get("repeats", 1))
    cells: dict[str, Cell] = {}
    for index, grid in enumerate(grids):
        where = f"grid[{index}]"
        grid = _table(where, grid)
        _reject_unknown(where, grid, _GRID_KEYS)
        grid.pop("name", None)
        repeats = _repeats(f"{where}.repeats", grid.pop("repeats", study_repeats))
        if repeats > 1:
            if "repeat" in grid:
                raise StudyError(f"{where}: give repeats = N or repeat = [...], not both")
            grid["repeat"] = list(range(repeats))
        for cell in expand_grid({**defaults, **grid}, where):
            _check_fits_node(cell, cluster, where)
            cells.setdefault(cell.cell_id, cell)
    return Study(name, description, data_dir, cluster, tuple(cells.values()), source, container, chosen.name)


def expand_grid(fields: dict[str, Any], where: str) -> list[Cell]:
    """Every combination of the list-valued fields, in the order the keys are written."""
    keys = list(fields)
    choices = []
    for key in keys:
        value = fields[key]
        if isinstance(value, list):
            if not value:
                raise StudyError(f"{where}.{key} is an empty list; give at least one value")
            choices.append(value)
        else:
            choices.append([value])
    cells = []
    for combo in itertools.product(*choices):
        try:
            cells.append(Cell(**dict(zip(keys, combo))))
        except CellError as exc:
            raise StudyError(f"{where}: {exc}") from exc
        except TypeError as exc:  # a required field is missing
            raise StudyError(f"{where}: {exc}".replace("__init__()", "a cell")) from exc
    return cells


def _repeats(where: str, value: Any) -> int:
    """How many times each cell of a grid runs (its `repeat` field numbers them 0..N-1)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise StudyError(f"{where} must be a whole number >= 1 (runs of each configuration), got {value!r}")
    return value


def _check_fits_node(cell: Cell, cluster: ClusterSpec, where: str) -> None:
    if cell.gpus_per_node > cluster.gpus_per_node:
        raise StudyError(
            f"{where}: gpus_per_node = {cell.gpus_per_node}, but a node has {cluster.gpus_per_node} "
            "([cluster] gpus_per_node); use more nodes or fewer GPUs per node"
        )


def _table(where: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise StudyError(f"{where} must be a table, got {type(value).__name__}")
    return dict(value)


def _reject_unknown(where: str, data: dict[str, Any], valid: set[str]) -> None:
    unknown = sorted(set(data) - valid)
    if unknown:
        raise StudyError(f"unknown key(s) {unknown} in {where}; valid keys: {', '.join(sorted(valid))}")


def find_cell(study: Study, cell_id: str) -> Optional[Cell]:
    return next((c for c in study.cells if c.cell_id == cell_id), None)
