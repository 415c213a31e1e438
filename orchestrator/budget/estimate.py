"""A cell's GPU-hour estimate (pure): from this results dir's finished cells of its shape, else
from the table of paces the repo measured (paces.csv), else from the profile.

    estimate (GPU-h) = GPUs x max(cell.estimate_s(images/s per GPU) + overhead_s, 0) / 3600

The profile's pace: [cluster] images_per_s_per_gpu, and STARTUP_S of overhead per job. Once
cells of a shape (kind, nodes, GPUs per node, engine, model, batch, pipeline, precision: what
sets the speed) have finished ok, every cell of that shape takes the median pace measured on them:

    images/s per GPU = images of all its epochs / their wall seconds (epoch_s) / GPUs
    overhead_s       = seconds its job held the GPUs - those epochs' seconds (start, evaluation, writing)

For a kind whose result has no epochs (no images/s to measure), the rate stays the profile's and
the overhead is what the job held beyond cell.estimate_s at that rate.

Where no cell of its shape has finished here, a training cell whose configuration the repo ran on
real GPUs takes the median of paces.csv's rows for it (the same formula, written by
benchmarks/paces.py, each row naming its GPU model and result dirs) and STARTUP_S per job.
"""
from __future__ import annotations

import csv
import functools
import operator
import statistics
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional
from collections.abc import Callable, Mapping

from jobs.core.cell import StudyCell
from jobs.core.result import Status
from orchestrator.watch.result_cache import ResultDigest, digest
from orchestrator.plan.cluster import ClusterSpec

STARTUP_S = 60.0  # per job, in the profile's pace: queue-to-first-step overhead
SPEED_FIELDS = ("engine", "model", "batch_per_gpu", "batch_size", "pipeline", "precision", "backend")


MEASURED, TABLE, PROFILE = "measured", "table", "profile"  # where an estimate's pace is from
PACES_FILE = Path(__file__).with_name("paces.csv")
PACE_COLUMNS = ("model", "engine", "nodes", "gpus_per_node", "batch_per_gpu", "pipeline", "precision", "gpu_model",
                "images_per_s_per_gpu", "runs", "source")


@dataclass(frozen=True)
class Pace:
    images_per_s_per_gpu: float
    overhead_s: float
    measured_cells: int = 0  # finished cells it is the median of; 0: the table's or the profile's
    source: str = PROFILE  # MEASURED (this results dir's cells), TABLE (paces.csv) or PROFILE
    gpu_model: str = ""  # TABLE: the GPU model its rows were measured on

    @property
    def measured(self) -> bool:
        return self.measured_cells > 0


@dataclass(frozen=True)
class Estimate:
    gpu_hours: float
    source: str  # MEASURED: from finished cells of the same shape here; TABLE: the repo's paces; PROFILE
    gpu_model: str = ""  # TABLE: the GPU model the repo measured on

    @property
    def measured(self) -> bool:
        return self.source == MEASURED


def profile_pace(cluster: ClusterSpec) -> Pace:
    return Pace(cluster.images_per_s_per_gpu, STARTUP_S)


@functools.cache
def repo_paces(path: Path = PACES_FILE) -> dict[tuple, Pace]:
    """paces.csv by shape_key: a training cell's configuration -> the median of its rows' paces (of
    each GPU model the repo measured it on), with STARTUP_S per job."""
    lines = [line for line in path.read_text().splitlines() if not line.startswith("#")]
    found: dict[tuple, list[dict[str, str]]] = {}
    for row in csv.DictReader(lines):
        key = ("train", int(row["nodes"]), int(row["gpus_per_node"]), row["engine"], row["model"],
               int(row["batch_per_gpu"]), row["pipeline"], row["precision"])
        found.setdefault(key, []).append(row)
    return {key: Pace(statistics.median(float(r["images_per_s_per_gpu"]) for r in rows), STARTUP_S, 0, TABLE,
                      " / ".join(sorted({r["gpu_model"] for r in rows})))
            for key, rows in found.items()}


def shape_key(cell: StudyCell) -> tuple:
    """What sets a cell's speed: its kind, nodes and GPUs per node, and those of SPEED_FIELDS its
    class has (the kind tells classes apart)."""
    return (cell.kind, cell.nodes, cell.gpus_per_node, *_speed_fields(type(cell))(cell))


@functools.cache
def _speed_fields(cls: type) -> Callable[[Any], tuple]:
    """One getter of the SPEED_FIELDS a cell class has, for 100,000 cells."""
    names = [n for n in SPEED_FIELDS if n in getattr(cls, "__dataclass_fields__", {}) or hasattr(cls, n)]
    getter = operator.attrgetter(*names) if names else None
    return lambda cell: () if getter is None else getter(cell) if len(names) > 1 else (getter(cell),)


def gpu_hours(cell: StudyCell, pace: Pace) -> float:
    """GPUs x max(cell.estimate_s(rate) + overhead_s, 0) / 3600; a CPU-only cell counts 0."""
    return cell.gpus * max(cell.estimate_s(pace.images_per_s_per_gpu) + pace.overhead_s, 0.0) / 3600


def measured_pace(cell: StudyCell, result: ResultDigest, held_s: Optional[float], profile: Pace) -> Optional[Pace]:
    """One finished cell's pace (see the module's docstring); None when it ran on no GPU, did not
    finish ok, or recorded neither epochs nor how long it held its GPUs. `result`: its ResultDigest (or a Result)."""
    result = digest(result)
    if result.status != Status.OK or cell.gpus <= 0:
        return None
    work_s, images = result.epoch_s, result.images
    if work_s > 0 and images > 0:
        overhead = max(held_s - work_s, 0.0) if held_s is not None else profile.overhead_s
        return Pace(images / work_s / cell.gpus, overhead, 1, MEASURED)
    if held_s is None:
        return None
    return Pace(profile.images_per_s_per_gpu, held_s - cell.estimate_s(profile.images_per_s_per_gpu), 1, MEASURED)


def learn(cells: Mapping[str, StudyCell], results: Mapping[str, object], held_s: Mapping[str, float],
          profile: Pace) -> dict[tuple, Pace]:
    """Per shape, the median pace of its cells (by id) that finished ok (`results` by cell id: an
    ResultDigest or a Result, else the error reading it; `held_s`: seconds each cell's job held its GPUs,
    where known)."""
    found: dict[tuple, list[Pace]] = {}
    for cell_id, result in results.items():
        cell = cells.get(cell_id)
        result = digest(result)
        if cell is not None and isinstance(result, ResultDigest):
            pace = measured_pace(cell, result, held_s.get(cell_id), profile)
            if pace is not None:
                found.setdefault(shape_key(cell), []).append(pace)
    return {key: Pace(statistics.median(p.images_per_s_per_gpu for p in paces),
                      statistics.median(p.overhead_s for p in paces), len(paces), MEASURED)
            for key, paces in found.items()}


def estimates(cells: Mapping[str, StudyCell], paces: Mapping[tuple, Pace], profile: Pace,
              table: Optional[Mapping[tuple, Pace]] = None) -> dict[str, Estimate]:
    """Each cell's estimate, by id: its shape's measured pace where there is one, else the table's
    (default: repo_paces()), else the profile's."""
    table = repo_paces() if table is None else table
    out: dict[str, Estimate] = {}
    made: dict[tuple[float, str, str], Estimate] = {}  # cells alike share one: a grid of 100,000 has a few distinct
    for cell_id, cell in cells.items():
        shape = shape_key(cell)
        pace = paces.get(shape) or table.get(shape) or profile
        key = (gpu_hours(cell, pace), pace.source, pace.gpu_model)
        out[cell_id] = made.get(key) or made.setdefault(key, Estimate(*key))
    return out


def profile_estimates(cells: Mapping[str, StudyCell], cluster: ClusterSpec) -> dict[str, Estimate]:
    """Every cell's estimate from the profile's pace alone."""
    return estimates(cells, {}, profile_pace(cluster), table={})


def estimates_text(found: Mapping[str, Estimate], images_per_s_per_gpu: float) -> str:
    """Where the cells' GPU-hours come from, in one line: how many from each source."""
    count = {source: sum(e.source == source for e in found.values()) for source in (MEASURED, TABLE, PROFILE)}
    models = sorted({e.gpu_model for e in found.values() if e.source == TABLE})
    words = {MEASURED: "the measured pace of finished cells of the same shape here",
             TABLE: f"the paces the repo measured on {' / '.join(models)} (orchestrator/budget/paces.csv)",
             PROFILE: f"the profile's {images_per_s_per_gpu:g} images/s per GPU + {STARTUP_S:g} s per job"}
    parts = [(n, words[source]) for source, n in count.items() if n]
    if len(parts) == 1:
        return f"est. GPU-h: {parts[0][1]}"
    return "est. GPU-h: " + ", ".join(f"{n} cell(s) from {what}" for n, what in parts)
