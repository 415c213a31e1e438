"""A study's cells grouped into job arrays, one per resource shape (pure), and the plan file.

SLURM takes one option set per array, so cells that need the same nodes, GPUs, tasks and
limits share an array. `plan` writes plan.json; `submit`, `status` and `collect` read it.
"""
from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import json
import operator
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from jobs.core.cell import StudyCell, kind_of
from jobs.core.kinds import cell_from_dict, kind_named
from jobs.core.atomic import strict_json, write_bytes_atomic
from jobs.core.layout import CELL_ID, LOG_DIR, PLAN_FILE, SBATCH_DIR, STUDY_FILE, check_cell_id
from results_format.plan_file import cell_dicts, cells_table, stored_ids
from jobs.core.regular_file import PLAN_MAX, NotRegular, TooLarge, read_regular
from results_format.sealed_json import is_sealed, sealed_text
from orchestrator.errors import PlanError, UserError
from orchestrator.plan import private_dir
from orchestrator.plan.cluster import GPU_REQUESTS, ClusterSpec, ContainerSpec, check_slurm_name
from orchestrator.plan.study import NAME, Study

_LEAST = {"nodes": 1, "tasks_per_node": 1, "cpus_per_task": 1, "time_min": 1}  # a shape's ints' least; else 0


@dataclass(frozen=True)
class ResourceShape:
    nodes: int
    gpus_per_node: int
    tasks_per_node: int
    cpus_per_task: int
    time_min: int
    partition: str = ""
    account: str = ""
    qos: str = ""
    constraint: str = ""
    mem_gb: int = 0
    gpu_request: str = "gpus-per-node"
    comment: str = ""

    def __post_init__(self) -> None:
        """Every field reaches an #SBATCH line: each checked where it is made, plan.json's read
        included (a hand-edited or forged file says which field is wrong, exit 2)."""
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.type == "int":
                least = _LEAST.get(field.name, 0)
                if not isinstance(value, int) or isinstance(value, bool) or value < least:
                    raise PlanError(f"shape.{field.name} must be a whole number >= {least}, got {value!r}")
            elif field.name == "gpu_request":
                if value not in GPU_REQUESTS:
                    raise PlanError(f"shape.gpu_request must be one of {list(GPU_REQUESTS)}, got {value!r}")
            else:
                check_slurm_name("shape", field.name, value)

    @property
    def name(self) -> str:
        return f"n{self.nodes}-g{self.gpus_per_node}-t{self.tasks_per_node}"


@dataclass(frozen=True)
class ArrayPlan:
    name: str
    shape: ResourceShape
    cell_ids: tuple[str, ...]

    def shape_for(self, time_min: Optional[int]) -> ResourceShape:
        """The request one submit sends: the array's, with `submit --time-min` when it is given."""
        return self.shape if time_min is None else dataclasses.replace(self.shape, time_min=time_min)


@dataclass(frozen=True)
class Plan:
    study: str
    description: str
    data_dir: str  # absolute
    results_dir: str  # absolute
    cluster: ClusterSpec
    cells: tuple[StudyCell, ...]
    arrays: tuple[ArrayPlan, ...]
    created_at: str
    container: ContainerSpec = ContainerSpec()
    profile: str = ""  # the cluster profile the plan was made with
    planned_in: str = dataclasses.field(default="", compare=False)  # results_dir as plan.json says, if moved since

    @functools.cached_property
    def cell_ids(self) -> tuple[str, ...]:
        """The cells' ids, in plan order (a cell's id is a hash: worth computing once)."""
        return tuple(cell.cell_id for cell in self.cells)

    @functools.cached_property
    def _cells_by_id(self) -> dict[str, StudyCell]:
        return dict(zip(self.cell_ids, self.cells, strict=True))

    @functools.cached_property
    def _arrays_by_cell(self) -> dict[str, ArrayPlan]:
        return {cid: array for array in self.arrays for cid in array.cell_ids}

    def cell(self, cell_id: str) -> StudyCell:
        try:
            return self._cells_by_id[cell_id]
        except KeyError:
            raise PlanError(f"cell {cell_id} is not in the plan of study {self.study}; `status` lists its cells") from None

    def array_of(self, cell_id: str) -> ArrayPlan:
        return self._arrays_by_cell[cell_id]

    @property
    def log_dir(self) -> Path:
        return Path(self.results_dir) / LOG_DIR

    def recorded(self, path: Path | str) -> str:
        """A path as the registry records it: relative to the results dir when inside it, so
        that the dir may be moved or copied."""
        try:
            return str(Path(path).absolute().relative_to(self.results_dir))
        except ValueError:
            return str(path)

    def resolve(self, recorded: Optional[str]) -> Optional[str]:
        """A recorded path where it is now: a relative one under the results dir, an absolute one
        under the dir the plan was made in (before this code recorded relative paths) moved along."""
        if not recorded:
            return recorded
        path = Path(recorded)
        if not path.is_absolute():
            return str(Path(self.results_dir) / path)
        if self.planned_in and path.is_relative_to(self.planned_in):
            return str(Path(self.results_dir) / path.relative_to(self.planned_in))
        return recorded

    def to_dict(self) -> dict[str, Any]:
        """plan.json's content: its cells as a table (results_format.plan_file)."""
        data = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name not in ("planned_in", "cells", "arrays", "cluster", "container")}
        data.update(cluster=dataclasses.asdict(self.cluster), container=dataclasses.asdict(self.container))
        data["arrays"] = [{"name": a.name, "shape": dataclasses.asdict(a.shape), "cell_ids": list(a.cell_ids)}
                          for a in self.arrays]
        data["cells"] = cells_table([c.to_dict() for c in self.cells], self.cell_ids)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any], sealed: bool = False) -> Plan:
        """A plan from its JSON; a hand-edited one is checked whole (ValueError or TypeError says
        what is wrong). `sealed`: the file is as `plan` wrote it (results_format.sealed_json), so its cells
        and their ids are taken as they are, without checking every cell again."""
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        _check_list(data["arrays"], dict, "arrays must be a list of objects")
        for a in data["arrays"]:
            _check_list(a["cell_ids"], str, f"array {a.get('name')!r}: cell_ids must be a list of cell ids")
            _check_name("array name", a["name"])  # it names sbatch/<name>.sh and the jobs
        arrays = tuple(
            ArrayPlan(a["name"], ResourceShape(**a["shape"]), tuple(a["cell_ids"])) for a in data["arrays"]
        )
        plan = cls(
            study=_check_name("study", data["study"]), description=data["description"], data_dir=data["data_dir"],
            results_dir=data["results_dir"], cluster=ClusterSpec(**data["cluster"]),
            cells=_cells(data["cells"], sealed), arrays=arrays, created_at=data["created_at"],
            container=ContainerSpec(**data.get("container", {})), profile=data.get("profile", ""),
        )
        _check_membership(plan)
        _check_shapes(plan, whole=not sealed)
        return plan


def _cells(cells: Any, sealed: bool) -> tuple[StudyCell, ...]:
    if sealed:
        found = sealed_cells(cells)
        if found is not None:
            return found
    return tuple(cell_from_dict(c) for c in cell_dicts(cells))


def sealed_cells(table: dict[str, Any]) -> Optional[tuple[StudyCell, ...]]:
    """The cells of a sealed plan's table: `plan` checked their fields and computed their ids when
    it wrote them, so they are built without checking them again (100,000 cells in 0.1 s, not 2 s)
    and keep those ids. None where that cannot be done: cells of a kind whose fields are not all
    plain values (a PTQ cell's tuples), of several kinds, or with a field their class does not know."""
    ids = stored_ids(table)
    if not all(map(CELL_ID.fullmatch, ids)):  # each names a file, <cell_id>.json: say which does not
        for cell_id in ids:
            check_cell_id(cell_id)
    shared, own = table["shared"], table["own"]
    if not isinstance(shared, dict) or not all(isinstance(o, dict) for o in own):
        return None
    cls = kind_named(kind_of(shared)).cell
    plain = _plain_fields(cls)
    if not plain or not shared.keys() <= plain or not all(o.keys() <= plain and "kind" not in o for o in own):
        return None
    base = {**_defaults(cls), **shared}
    base.pop("kind", None)  # the class's, not a field
    cells = []
    for fields, cell_id in zip(own, ids, strict=True):
        cell = object.__new__(cls)
        cell.__dict__.update(base)
        cell.__dict__.update(fields)
        cell.__dict__["cell_id"] = cell_id  # its functools.cached_property's place
        cells.append(cell)
    return tuple(cells)


@functools.cache
def _plain_fields(cls: type) -> frozenset[str]:
    """The field names (and "kind") of a cell class that a checked cell may be built of: one whose
    fields are ints, floats, strings and booleans and whose id is a cached property; else none."""
    fields = dataclasses.fields(cls)
    plain = all(str(f.type) in ("int", "float", "str", "bool") for f in fields)
    cached = isinstance(vars(cls).get("cell_id"), functools.cached_property)
    return frozenset([f.name for f in fields] + ["kind"]) if plain and cached else frozenset()


@functools.cache
def _defaults(cls: type) -> dict[str, Any]:
    return {f.name: f.default for f in dataclasses.fields(cls) if f.default is not dataclasses.MISSING}


def _check_name(what: str, value: Any) -> str:
    """A study's or an array's name: one path component of plain characters (study.NAME)."""
    if not isinstance(value, str) or not NAME.fullmatch(value):
        raise ValueError(f"{what} must be letters, digits and _.- (at most 100), got {value!r}")
    return value


def _check_list(value: Any, item: type, message: str) -> None:
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, item) for v in value):
        raise TypeError(message)


_NEEDS = operator.attrgetter("nodes", "gpus_per_node", "tasks_per_node", "cpus_per_task")  # what a shape takes of a cell


def _check_shapes(plan: Plan, whole: bool) -> None:
    """No array asks for more GPUs than a node has, whatever the file's seal; `whole` (a plan not
    sealed by this user): each asks SLURM for exactly what its cells need on this cluster (shape_of),
    so a hand-edited shape (another time limit, more nodes) is refused."""
    for array in plan.arrays:
        if array.shape.gpus_per_node > plan.cluster.gpus_per_node:
            raise ValueError(f"array {array.name} asks for shape.gpus_per_node = {array.shape.gpus_per_node}, but a "
                             f"node has {plan.cluster.gpus_per_node} (cluster.gpus_per_node)")
        if not whole:
            continue
        cells = map(plan._cells_by_id.__getitem__, array.cell_ids)
        for cell in {_NEEDS(cell): cell for cell in cells}.values():  # one of each need: 100,000 cells, few needs
            need = shape_of(cell, plan.cluster)
            if need != array.shape:
                name, have, wanted = next((f.name, getattr(array.shape, f.name), getattr(need, f.name))
                                          for f in dataclasses.fields(need)
                                          if getattr(array.shape, f.name) != getattr(need, f.name))
                raise ValueError(f"array {array.name}: shape.{name} = {have!r}, but its cell {cell.cell_id} needs "
                                 f"{wanted!r} on this cluster")


def _check_membership(plan: Plan) -> None:
    """Every cell once in cells and in exactly one array, and arrays hold only those cells:
    status and submit count and queue cells by these lists."""
    planned: set[str] = set()
    for cell_id in plan.cell_ids:
        if cell_id in planned:
            raise ValueError(f"cell {cell_id} is in cells twice")
        planned.add(cell_id)
    placed: dict[str, str] = {}
    for array in plan.arrays:
        for cell_id in array.cell_ids:
            if cell_id not in planned:
                raise ValueError(f"array {array.name} holds cell {cell_id}, which is not in cells")
            if cell_id in placed:
                raise ValueError(f"cell {cell_id} is in two arrays ({placed[cell_id]} and {array.name})"
                                 if placed[cell_id] != array.name else f"cell {cell_id} is in array {array.name} twice")
            placed[cell_id] = array.name
    missing = planned - placed.keys()
    if missing:
        raise ValueError(f"cell {min(missing)} is in no array")


def check_results_path(path: Path) -> None:
    """The results dir's path goes into #SBATCH --output/--error lines, where SLURM reads % as a
    pattern and \\ as an escape (even inside quotes): refuse paths it would not read back exactly."""
    text = str(path)
    if "\\" in text:
        raise PlanError(f"--results {text!r}: SLURM reads a backslash in #SBATCH lines as an escape, and the jobs "
                        "could not write their logs; pick a dir without backslashes")
    if any(c in text for c in "%\n\r"):
        raise PlanError(f"--results {text!r}: SLURM reads % in log paths as a pattern; "
                        "pick a dir without % or newlines")


def shape_of(cell: StudyCell, cluster: ClusterSpec) -> ResourceShape:
    cpus = cluster.cpus_per_task or cell.cpus_per_task
    return ResourceShape(
        nodes=cell.nodes, gpus_per_node=cell.gpus_per_node, tasks_per_node=cell.tasks_per_node,
        cpus_per_task=cpus, time_min=cluster.time_min, partition=cluster.partition, account=cluster.account,
        qos=cluster.qos, constraint=cluster.constraint, mem_gb=cluster.mem_gb, gpu_request=cluster.gpu_request,
        comment=cluster.comment,
    )


def group_arrays(cells: tuple[StudyCell, ...], cluster: ClusterSpec) -> tuple[ArrayPlan, ...]:
    """One array per distinct shape, in the order the shapes first appear."""
    groups: dict[ResourceShape, list[str]] = {}
    shapes: dict[tuple, ResourceShape] = {}  # a shape is the cluster's and these: made once for 100,000 cells
    for cell in cells:
        key = (cell.nodes, cell.gpus_per_node, cell.tasks_per_node, cell.cpus_per_task)
        shape = shapes.get(key) or shapes.setdefault(key, shape_of(cell, cluster))
        groups.setdefault(shape, []).append(cell.cell_id)
    return tuple(ArrayPlan(shape.name, shape, tuple(ids)) for shape, ids in groups.items())


def build_plan(study: Study, results_dir: Path, cwd: Path) -> Plan:
    data_dir = Path(study.data_dir).expanduser()
    if not data_dir.is_absolute():
        data_dir = cwd / data_dir
    return Plan(
        study=study.name, description=study.description, data_dir=str(data_dir),
        results_dir=str(Path(results_dir).absolute()), cluster=study.cluster, cells=study.cells,
        arrays=group_arrays(study.cells, study.cluster),
        created_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        container=study.container, profile=study.profile,
    )


def plan_bytes(plan: Plan) -> bytes:
    """plan.json's sealed text (results_format.sealed_json), its cells a table (results_format.plan_file). Cells
    hold no NaN or infinity (every kind refuses them), so only the rest is made strict JSON."""
    data = plan.to_dict()
    cells = data.pop("cells")
    return sealed_text({**strict_json(data), "cells": cells}).encode()


def install_plan(plan: Plan, source: str, scripts: dict[str, str]) -> Path:
    """Write plan.json, study.toml and sbatch/<array>.sh all or nothing: built in a staging dir
    beside them, then renamed into place (the old ones put back if a rename fails). Refuses to
    replace files that `plan` did not write."""
    results_dir = Path(plan.results_dir)
    if os.path.lexists(results_dir) and not results_dir.is_dir():
        raise PlanError(f"--results {results_dir} is not a directory (a file, or a link to nothing); "
                        "pass --results a new or empty dir")
    try:
        private_dir.make_dirs(results_dir)
        check_owned(results_dir)
        stage = Path(tempfile.mkdtemp(prefix=".plan-", dir=results_dir))
    except OSError as exc:
        raise PlanError(f"cannot write the plan in {results_dir} ({exc.strerror}); "
                        "pass --results DIR somewhere you can write") from exc
    try:
        (stage / SBATCH_DIR).mkdir()
        for name, text in scripts.items():
            (stage / SBATCH_DIR / f"{name}.sh").write_text(text)
        (stage / STUDY_FILE).write_text(source)
        write_bytes_atomic(stage / PLAN_FILE, plan_bytes(plan))
        _swap_in(stage, results_dir)
    except OSError as exc:
        raise PlanError(f"cannot write the plan in {results_dir} ({exc.strerror}); the previous plan is "
                        "unchanged; free some space or pass --results DIR elsewhere") from exc
    finally:
        shutil.rmtree(stage, ignore_errors=True)  # the new files on failure, else the old ones
    return results_dir / PLAN_FILE


def check_owned(results_dir: Path) -> None:
    """What `plan` replaces must be what an earlier `plan` wrote: study.toml and sbatch/ beside a
    plan.json, and nothing in sbatch/ but its scripts."""
    ours = (results_dir / PLAN_FILE).is_file() and not (results_dir / PLAN_FILE).is_symlink()
    theirs = [name for name in (STUDY_FILE, SBATCH_DIR) if os.path.lexists(results_dir / name) and not ours]
    sbatch = results_dir / SBATCH_DIR
    if ours and os.path.lexists(sbatch):
        if sbatch.is_symlink() or not sbatch.is_dir():
            theirs.append(SBATCH_DIR)
        else:
            theirs += [f"{SBATCH_DIR}/{p.name}" for p in sbatch.iterdir()
                       if p.is_symlink() or not p.is_file() or p.suffix != ".sh"]
    if theirs:
        raise PlanError(f"{results_dir} holds {', '.join(sorted(theirs)[:3])}, which `plan` did not write; "
                        "move it away, or pass --results a new or empty dir")


def _swap_in(stage: Path, results_dir: Path) -> None:
    """Rename the staged files into place, plan.json last (the other verbs read it); the old ones
    go into the staging dir. If a rename fails, everything goes back as it was."""
    old = stage / "old"
    old.mkdir()
    done: list[tuple[str, bool]] = []
    try:
        for name in (SBATCH_DIR, STUDY_FILE, PLAN_FILE):
            had = os.path.lexists(results_dir / name)
            if had:
                os.rename(results_dir / name, old / name)
            done.append((name, had))
            os.rename(stage / name, results_dir / name)
    except OSError:
        for name, had in reversed(done):
            if not os.path.lexists(stage / name):
                os.rename(results_dir / name, stage / name)
            if had:
                os.rename(old / name, results_dir / name)
        raise


def read_plan(results_dir: Path) -> Plan:
    path = Path(results_dir) / PLAN_FILE
    if not path.exists():
        raise PlanError(f"no plan in {results_dir}; run `python -m orchestrator plan` first (same --study/--results)")
    try:
        text = read_regular(path, "plan file", PLAN_MAX)
        plan = Plan.from_dict(json.loads(text), sealed=is_sealed(text))
    except (NotRegular, TooLarge) as exc:
        raise PlanError(f"{exc}; run `python -m orchestrator plan` again") from exc
    except (OSError, ValueError, KeyError, TypeError, UserError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise PlanError(f"plan file {path} is unreadable ({why}); run `python -m orchestrator plan` again") from exc
    here = str(Path(results_dir).absolute())  # a results dir is relocatable: where it is now wins
    if plan.results_dir == here:
        return plan
    return dataclasses.replace(plan, results_dir=here, planned_in=plan.results_dir)


def planned_study(results_dir: Path) -> Optional[str]:
    """The study named in the results dir's plan.json, without checking the plan (collect reads
    JSON only); None where there is none, or none readable (its reader then says why)."""
    try:
        data = json.loads(read_regular(Path(results_dir) / PLAN_FILE, "plan file", PLAN_MAX))
    except (OSError, ValueError, RecursionError):  # NotRegular, TooLarge too
        return None
    study = data.get("study") if isinstance(data, dict) else None
    return study if isinstance(study, str) else None
