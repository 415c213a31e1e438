"""Cells run one after another in one process (a packed array task, CellsRun): what the process
keeps between them, and why each is safe.

Kept, because none of it carries a number from one cell to the next:
- the imports (torch, torchvision, the kind's modules) and the CUDA context: code and a driver
  handle, no tensors;
- the process group, where the next cell's world is the same (backend, rank, world size,
  rendezvous): its communicators hold no values, and each cell's model is broadcast from rank 0
  when DDP wraps it. After a failed cell the group is ended, and the next cell makes its own:
  a rank may have left a collective half done;
- the data sets as read from disk (pixels and labels): every cell copies them (to its device, or
  through its transforms) and never writes them; each cell gets its own dataset object, with its
  own transform.

Fresh for every cell, so its numbers are those it would have alone: the model and optimizer (built
by the cell's trainer), the seeds and the data order (the trainer seeds torch and makes its own
samplers and generators from the cell's seed), cuDNN's benchmark flags (set by the cell's device
choice), torch.compile's caches (dynamo is reset after a cell that compiled: a new model per cell would
otherwise use up its recompile limit and fall back to eager), and the GPU's cached memory and peak counter (an OOM of
one cell leaves nothing behind). cuDNN's cache of the algorithms it timed cannot be cleared from
Python (torch 2.14): a later cell skips re-timing a convolution shape already timed, which changes
its untimed first epoch, not what it computes.
"""
from __future__ import annotations

import contextlib
import copy
import datetime as dt
import gc
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import torch
import torch.distributed as dist
from torchvision.datasets.vision import StandardTransform

from jobs.core.cell import StudyCell
from jobs.core.kinds import run_cell
from jobs.core.layout import cell_log_header
from jobs.core.phases import launch_s, process_age_s
from jobs.core.result import Status

GROUP_TIMEOUT = dt.timedelta(minutes=10)


@dataclass
class _Kept:
    """This process's state between cells (one per process: _kept)."""

    packing: bool = False  # inside run_cells: keep the group and the data sets between cells
    cells: int = 0  # cells whose job ran in this process
    ended_at: Optional[float] = None  # time.time() at the end of the last
    group: Optional[tuple[Any, ...]] = None  # the kept process group's key
    compiled: bool = False  # a cell since the last clean-up ran torch.compile (used_compile)
    data: dict[tuple[Any, ...], Any] = field(default_factory=dict)


_kept = _Kept()


@dataclass(frozen=True)
class CellStart:
    """When a cell's job began, as its phases count it."""

    start_s: Optional[float]  # the process's start -> the cell's first line; after a cell: that cell's end -> it
    launch_s: Optional[float]  # the task's start -> the process's; 0 after a cell (this cell waited for no launch)
    cells_before: int  # cells this process ran before: 0, it paid the start and set-up; 1+, it reused them


def cell_started() -> CellStart:
    """Called on a cell's first line. The first cell's start is the process's; a later one's begins
    where the cell before it ended, and the device is cleaned of what that cell left."""
    if _kept.cells == 0 or _kept.ended_at is None:
        age = process_age_s()
        return CellStart(age, None if age is None else launch_s(time.time() - age, os.environ), _kept.cells)
    since = max(0.0, time.time() - _kept.ended_at)
    fresh_device()
    return CellStart(since, 0.0, _kept.cells)


def cell_ended() -> None:
    _kept.cells += 1
    _kept.ended_at = time.time()


def used_compile() -> None:
    """Called by a cell that runs torch.compile: its caches are reset before the next cell."""
    _kept.compiled = True


def fresh_device() -> None:
    """Free what the cell before left on the GPU (an OOM's tensors held in reference cycles included)
    and reset the peak counter and, after a cell that compiled, torch.compile's caches, so the next
    cell's memory and compilation are its own. Dynamo is reset only then: its reset imports
    inductor, 5.5 s on an H100 after a faithful cell (benchmarks/setup_breakdown.py). The garbage is
    collected only where GPU memory is still held: a full collection costs 0.3-0.6 s with torch loaded."""
    if _kept.compiled:
        torch._dynamo.reset()
        _kept.compiled = False
    if not (torch.cuda.is_available() and torch.cuda.is_initialized()):
        return
    for index in range(torch.cuda.device_count()):
        if torch.cuda.memory_allocated(index):
            gc.collect()
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(index)


def join_group(backend: str, init_method: str, rank: int, world_size: int, device: Optional[torch.device]) -> None:
    """This cell's process group: the one kept from the cell before where its world is the same."""
    key = (backend, init_method, rank, world_size, device)
    if dist.is_initialized() and _kept.group == key:
        return
    leave_group()
    dist.init_process_group(backend, init_method=init_method, rank=rank, world_size=world_size,
                            timeout=GROUP_TIMEOUT, device_id=device)
    _kept.group = key


def cell_grouped_end(failed: bool) -> None:
    """After a cell that joined a group: kept for the next cell when packing and the cell did not fail.
    A failed cell's group is not ended here (a rank may still wait in a collective); the next join
    replaces it."""
    if failed:
        _kept.group = None
    elif not _kept.packing:
        leave_group()


def leave_group() -> None:
    if dist.is_initialized():
        dist.destroy_process_group()
    _kept.group = None


def dataset(kind: type, root: Path, train: bool, transform: Any) -> Any:
    """`kind(root, train=train, transform=transform)` (a torchvision data set that reads its files
    whole); while packing, the files are read once and each call gets its own copy of the object,
    sharing the pixels and labels, with its own transform."""
    if not _kept.packing:
        return kind(str(root), train=train, download=False, transform=transform)
    key = (kind, str(Path(root).resolve()), train)
    if key not in _kept.data:
        _kept.data[key] = kind(str(root), train=train, download=False)
    mine = copy.copy(_kept.data[key])
    mine.transform = transform  # as torchvision's VisionDataset sets them from its arguments
    mine.transforms = None if transform is None else StandardTransform(transform, None)
    return mine


@contextlib.contextmanager
def packing() -> Iterator[None]:
    """Cells run inside keep the group and data sets between them; all dropped at the end."""
    _kept.packing = True
    try:
        yield
    finally:
        _kept.packing = False
        _kept.data.clear()
        if _kept.group is not None:
            leave_group()


def run_cells(cells: list[StudyCell], out_dir: Path, data_dir: Path) -> list[str]:
    """Run each cell in order in this process with its kind's run (which skips a cell with a good
    result), each under a header line in both logs (rank 0 and the others alike: each rank's
    stdout and stderr are cut at it). A failed cell has its failed result; the next still runs, and the task ends failed
    (PackFailed). Only the failures' words are kept: an exception holds its frames, and their tensors."""
    statuses: list[str] = []
    failed: list[str] = []
    with packing():
        for index, cell in enumerate(cells):
            header = cell_log_header(cell.cell_id, index, len(cells), cell.label)
            print(header, flush=True)
            print(header, file=sys.stderr, flush=True)
            try:
                statuses.append(run_cell(cell, out_dir, data_dir))
            except Exception as exc:  # its result says why; the task still runs the cells after it
                failed.append(f"{cell.cell_id}: {last_words(exc)}")
                print(f"[{cell.cell_id}] failed: {last_words(exc)}", flush=True)
                statuses.append(Status.FAILED)
    if failed:
        raise PackFailed(f"{len(failed)} of {len(cells)} cells failed (their results say why): {'; '.join(failed)}")
    return statuses


class PackFailed(RuntimeError):
    """Some cells of a packed task failed; the task ends failed, each cell's result holds its failure."""


def last_words(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[-1] if lines else ''}"
