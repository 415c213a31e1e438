"""Study files (TOML) -> a validated Study -> its cells (pure and deterministic).

A study holds one kind of cell (`kind`: train, the default, or ptq), the cluster's node shape
and request ([cluster]), cell fields shared by every grid ([defaults]), and grids ([[grid]]):
each list-valued key in a grid is expanded as a Cartesian product, except the fields a kind
sweeps inside one cell (jobs.core.kinds.Kind.swept). A cell that two grids both produce is run once.
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from jobs.core.cell import TRAIN, CellError
from jobs.core.cell import StudyCell
from jobs.core.kinds import Kind, kind_named
from orchestrator.plan.cluster import ClusterSpec, ContainerSpec, build_specs, load_profile
from orchestrator.errors import StudyError
from orchestrator.plan.strict_toml import read_toml, reject_unknown, table

STUDIES_DIR = Path(__file__).parents[1] / "studies"
DEFAULT_STUDY = "quick"  # the verbs' study when neither --study nor --results says
_TOP_KEYS = {"name", "description", "kind", "data_dir", "profile", "repeats", "cluster", "container", "defaults",
             "grid", "max_cells"}
MAX_CELLS = 10_000  # a study's default limit: plan.json and status grow with it
MAX_CELLS_CEILING = 200_000  # max_cells' own: twice the 100,000 cells the views are built for (10^7 took minutes, GBs)
MAX_REPEATS = 1_000
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")


@dataclass(frozen=True)
class Study:
    name: str
    description: str
    data_dir: str
    cluster: ClusterSpec
    cells: tuple[StudyCell, ...]
    source: str  # the TOML text, kept with the plan
    container: ContainerSpec = ContainerSpec()
    profile: str = ""  # the cluster profile's name; "" for none


def available_studies() -> list[str]:
    return sorted(p.stem for p in STUDIES_DIR.glob("*.toml"))


def check_name(name: Any) -> str:
    """A study's name names its results dir (runs/<name>) and its jobs: one path component."""
    if not isinstance(name, str) or not NAME.fullmatch(name):
        raise StudyError(f"name must be letters, digits and _.- (at most 100, the first a letter or digit: "
                         f"it names the results dir runs/<name>), got {name!r}")
    return name


def find_study(name_or_path: str) -> Path:
    """A TOML file by path, or a shipped study by name (a directory of that name does not hide it)."""
    path = Path(name_or_path)
    shipped = STUDIES_DIR / f"{name_or_path}.toml"
    if path.is_file():
        return path
    if path.suffix != ".toml" and NAME.fullmatch(name_or_path) and shipped.is_file():
        return shipped
    if path.is_dir():
        raise StudyError(f"{path} is a directory, not a study file; give a .toml file or a shipped study's name "
                         f"({', '.join(available_studies())})")
    if path.suffix == ".toml" or path.exists():
        raise StudyError(f"study file {path} does not exist" if not path.exists() else f"{path} is not a file")
    raise StudyError(
        f"unknown study {name_or_path!r}; shipped studies: {', '.join(available_studies())} "
        "(or give the path of a .toml file)"
    )


def load_study(name_or_path: str, profile: Optional[str] = None) -> Study:
    """A study file, over the cluster profile it names (or `profile`, which wins)."""
    path = find_study(name_or_path)
    text, data = read_toml(path)
    try:
        return parse_study(data, text, default_name=path.stem, profile=profile, study_dir=path.parent)
    except StudyError as exc:
        raise StudyError(f"{path}: {exc}") from exc


def study_name(name_or_path: str) -> str:
    """The study's name, without expanding its grids: its file's `name` (else the file's stem), or
    a plain name as it is (the verbs after `plan` need only the name of the results dir)."""
    if not Path(name_or_path).is_file() and Path(name_or_path).suffix != ".toml" and NAME.fullmatch(name_or_path):
        return name_or_path
    path = find_study(name_or_path)
    name = read_toml(path)[1].get("name", path.stem)
    try:
        return check_name(name)
    except StudyError as exc:
        raise StudyError(f"{path}: {exc}") from exc


def parse_study(data: dict[str, Any], source: str = "", default_name: str = "study",
                profile: Optional[str] = None, study_dir: Optional[Path] = None) -> Study:
    reject_unknown("the top level", data, _TOP_KEYS)
    name = check_name(data.get("name", default_name))
    description = data.get("description", "")
    data_dir = data.get("data_dir", "data")
    if not isinstance(description, str) or not isinstance(data_dir, str):
        raise StudyError("description and data_dir must be strings")
    profile_name = profile or data.get("profile", "")
    if not isinstance(profile_name, str):
        raise StudyError(f"profile must be a profile's name or a .toml path, got {profile_name!r}")
    chosen = load_profile(profile_name)
    cluster, container = build_specs(chosen, table("cluster", data.get("cluster", {})),
                                      table("container", data.get("container", {})))
    kind_name = data.get("kind", TRAIN)
    try:
        kind = kind_named(kind_name)
    except CellError as exc:
        raise StudyError(str(exc)) from None
    cell_fields = {f.name for f in dataclasses.fields(kind.cell)}
    defaults = table("defaults", data.get("defaults", {}))
    if not kind.user_fields:
        reject_unknown("[defaults]", defaults, cell_fields)
    check_axes(defaults, "[defaults]", kind)
    grids = data.get("grid", [])
    if not isinstance(grids, list) or not grids:
        raise StudyError("a study needs at least one [[grid]] table")
    study_repeats = _repeats("repeats", data.get("repeats", 1))
    tables = []
    for index, grid in enumerate(grids):
        where = f"grid[{index}]"
        grid = table(where, grid)
        if not kind.user_fields:
            reject_unknown(where, grid, cell_fields | {"name", "repeats"})
        grid.pop("name", None)
        repeats = _repeats(f"{where}.repeats", grid.pop("repeats", study_repeats))
        check_axes(grid, where, kind)
        if repeats > MAX_REPEATS:
            raise StudyError(f"{where}.repeats = {repeats:,}: at most {MAX_REPEATS} runs of a configuration")
        if repeats > 1:
            if "repeat" in grid:
                raise StudyError(f"{where}: give repeats = N or repeat = [...], not both")
            grid["repeat"] = list(range(repeats))
        tables.append((where, resolve_paths({**defaults, **grid}, kind, study_dir, where)))
        _check_required(tables[-1][1], where, kind)
    check_size(tables, data.get("max_cells", MAX_CELLS), kind)
    cells: dict[str, StudyCell] = {}
    for where, fields in tables:
        for cell in expand_grid(fields, where, kind):
            _check_fits_node(cell, cluster, where)
            cells.setdefault(cell.cell_id, cell)
    return Study(name, description, data_dir, cluster, tuple(cells.values()), source, container, chosen.name)


def resolve_paths(fields: dict[str, Any], kind: Kind, study_dir: Optional[Path], where: str) -> dict[str, Any]:
    """The kind's directory fields (Kind.paths) made absolute, relative to the study file's
    directory (the current one for a study without a file); each must be a directory now."""
    base = Path(study_dir if study_dir is not None else ".").resolve()
    for name in kind.paths:
        given = fields.get(name, ".")
        if not isinstance(given, str):
            raise StudyError(f"{where}.{name} must be a directory's path (a string), got {given!r}")
        path = base / given
        if not path.is_dir():
            raise StudyError(f"{where}.{name} = {given!r}: {path} is not a directory (it is relative to the study "
                             "file's directory)")
        fields[name] = str(path.resolve())
    return fields


def axes(fields: dict[str, Any], kind: Kind) -> list[str]:
    """The keys a grid expands over: its list-valued keys, but those its kind sweeps inside a cell."""
    return [k for k, v in fields.items() if isinstance(v, list) and k not in kind.swept]


def check_axes(fields: dict[str, Any], where: str, kind: Kind) -> None:
    """An axis with no value would expand to no cells, and one that lists a value twice to the
    same cell twice: both are mistakes in the study file, not something to plan around."""
    for key in axes(fields, kind):
        values = fields[key]
        if not values:
            raise StudyError(f"{where}.{key} is an empty list; give at least one value")
        seen: set[Any] = set()
        for value in values:
            if _value_key(value) in seen:
                raise StudyError(f"{where}.{key} lists {value!r} twice; give each value once")
            seen.add(_value_key(value))


def _value_key(value: Any) -> Any:
    """Equal values (1 and 1.0) share a key; true is not 1; a list or table is keyed by its JSON."""
    if isinstance(value, (list, dict)):
        return json.dumps(value, sort_keys=True, default=str)
    return (isinstance(value, bool), value)


def _check_required(fields: dict[str, Any], where: str, kind: Kind) -> None:
    missing = [f.name for f in dataclasses.fields(kind.cell) if f.init and f.name not in fields
               and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
    if missing:
        one = len(missing) == 1
        raise StudyError(f"{where}: {' and '.join(missing)} {'is' if one else 'are'} required; "
                         f"give {'it' if one else 'them'} in the grid or in [defaults]")


def grid_size(fields: dict[str, Any], kind: Kind) -> int:
    """How many cells a grid expands to: the product of its axes' lengths."""
    return math.prod(len(fields[k]) for k in axes(fields, kind))


def check_size(tables: list[tuple[str, dict[str, Any]]], limit: Any, kind: Kind) -> None:
    """Count before expanding: a grid too big to hold is refused with its size."""
    if not isinstance(limit, int) or isinstance(limit, bool) or not 0 < limit <= MAX_CELLS_CEILING:
        raise StudyError(f"max_cells must be an int from 1 to {MAX_CELLS_CEILING:,}, got {limit!r}; "
                         "split a bigger study into several")
    sizes = [(where, grid_size(fields, kind)) for where, fields in tables]
    total = sum(n for _, n in sizes)
    if total > limit:
        biggest = max(sizes, key=lambda pair: pair[1])
        raise StudyError(f"the grids expand to {total:,} cells ({biggest[0]}: {biggest[1]:,}), above max_cells = "
                         f"{limit:,}; shrink the grids, or raise max_cells at the top of the study file")


def expand_grid(fields: dict[str, Any], where: str, kind: Kind) -> list[StudyCell]:
    """Every combination of the grid's axes, in the order the keys are written."""
    keys, expanded = list(fields), set(axes(fields, kind))
    choices = []
    for key in keys:
        value = fields[key]
        choices.append(value if key in expanded else [value])
    cells = []
    for combo in itertools.product(*choices):
        try:
            cells.append(kind.cell(**dict(zip(keys, combo, strict=True))))
        except CellError as exc:
            raise StudyError(f"{where}: {exc}") from exc
        except TypeError as exc:  # required fields were checked before: a cell's own check
            raise StudyError(f"{where}: {exc}") from exc
    return cells


def _repeats(where: str, value: Any) -> int:
    """How many times each cell of a grid runs (its `repeat` field numbers them 0..N-1)."""
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise StudyError(f"{where} must be a whole number >= 1 (runs of each configuration), got {value!r}")
    return value


def _check_fits_node(cell: StudyCell, cluster: ClusterSpec, where: str) -> None:
    if cell.gpus_per_node > cluster.gpus_per_node:
        raise StudyError(
            f"{where}: gpus_per_node = {cell.gpus_per_node}, but a node has {cluster.gpus_per_node} "
            "([cluster] gpus_per_node); use more nodes or fewer GPUs per node"
        )
