"""A cell's GPU-hour estimate, from the profile or learnt from finished cells of its shape (pure).

    estimate (GPU-h) = GPUs x max(cell.estimate_s(images/s per GPU) + overhead_s, 0) / 3600

The profile's pace: [cluster] images_per_s_per_gpu, and STARTUP_S of overhead per job. Once
cells of a shape (kind, nodes, GPUs per node, engine, model, batch, pipeline, precision: what
sets the speed) have finished ok, every cell of that shape takes the median pace measured on them:

    images/s per GPU = images of all its epochs / their wall seconds (epoch_s) / GPUs
    overhead_s       = seconds its job held the GPUs - those epochs' seconds (start, evaluation, writing)

For a kind whose result has no epochs (no images/s to measure), the rate stays the profile's and
the overhead is what the job held beyond cell.estimate_s at that rate.
"""
from __future__ import annotations

import functools
import operator
import statistics
from dataclasses import dataclass
from typing import Any, Optional
from collections.abc import Callable, Mapping

from jobs.core.cell import StudyCell
from jobs.core.result import Status
from orchestrator.watch.result_cache import ResultDigest, digest
from orchestrator.plan.cluster import ClusterSpec

STARTUP_S = 60.0  # per job, in the profile's pace: queue-to-first-step overhead
SPEED_FIELDS = ("engine", "model", "batch_per_gpu", "batch_size", "pipeline", "precision", "backend")


@dataclass(frozen=True)
class Pace:
    images_per_s_per_gpu: float
    overhead_s: float
    measured_cells: int = 0  # finished cells it is the median of; 0: the profile's

    @property
    def measured(self) -> bool:
        return self.measured_cells > 0


@dataclass(frozen=True)
class Estimate:
    gpu_hours: float
    measured: bool  # from finished cells of the same shape, else from the profile


def profile_pace(cluster: ClusterSpec) -> Pace:
    return Pace(cluster.images_per_s_per_gpu, STARTUP_S)


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
        return Pace(images / work_s / cell.gpus, overhead, 1)
    if held_s is None:
        return None
    return Pace(profile.images_per_s_per_gpu, held_s - cell.estimate_s(profile.images_per_s_per_gpu), 1)


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
                      statistics.median(p.overhead_s for p in paces), len(paces))
            for key, paces in found.items()}


def estimates(cells: Mapping[str, StudyCell], paces: Mapping[tuple, Pace], profile: Pace) -> dict[str, Estimate]:
    """Each cell's estimate, by id: its shape's measured pace where there is one, else the profile's."""
    out: dict[str, Estimate] = {}
    made: dict[tuple[float, bool], Estimate] = {}  # cells alike share one: a grid of 100,000 has a few distinct
    for cell_id, cell in cells.items():
        pace = paces.get(shape_key(cell), profile) if paces else profile
        key = (gpu_hours(cell, pace), pace.measured)
        out[cell_id] = made.get(key) or made.setdefault(key, Estimate(*key))
    return out


def profile_estimates(cells: Mapping[str, StudyCell], cluster: ClusterSpec) -> dict[str, Estimate]:
    """Every cell's estimate from the profile's pace alone."""
    return estimates(cells, {}, profile_pace(cluster))


def estimates_text(found: Mapping[str, Estimate], images_per_s_per_gpu: float) -> str:
    """Which cells' GPU-hours are measured and which are the profile's, in one line."""
    measured = sum(e.measured for e in found.values())
    profile = f"the profile's {images_per_s_per_gpu:g} images/s per GPU + {STARTUP_S:g} s per job"
    if not measured:
        return f"est. GPU-h: {profile}"
    return (f"est. GPU-h: {measured} cell(s) from the measured pace of finished cells of the same shape, "
            f"{len(found) - measured} from {profile}")
