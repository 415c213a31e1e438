"""What ran beside a local cell on its machine, recorded in its result (issue 46): packed cells
share the machine's CPUs, memory bandwidth and PCIe, so a time is read with its neighbours.

The local executor tells each rank its GPUs and the machine's per-GPU lock files (BESIDE_ENV).
A GPU is busy while a cell's ranks (or its queue) hold its lock; the file holds the id of the job
started on it last. The job looks at the other GPUs when it starts and when it ends: a cell
beside it either ran at its start, or started during its run (its GPU's job id changed), or ran
at its end. Cells started one after another on one GPU during the run count once: the count is
at least that many. Torch-free; the files are only read (and probed), never written.
"""
from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

# {"mine": [the GPUs it holds], "gpus": [those it runs on], "locks": {every GPU's index: its lock file}}
BESIDE_ENV = "ORCHESTRATOR_BESIDE"
FIELDS = ("gpu_ids", "cells_beside", "gpus_beside")  # the result env's keys


@dataclass(frozen=True)
class Beside:
    gpu_ids: str  # "0,1": the GPUs it ran on, as nvidia-smi numbers them; "" on a machine without GPUs
    cells: int  # other cells that ran on this machine during its run (at least)
    gpus: int  # the GPUs they ran on

    def to_env(self) -> dict[str, Any]:
        return dict(zip(FIELDS, (self.gpu_ids, self.cells, self.gpus), strict=True))

    @classmethod
    def from_env(cls, env: Mapping[str, Any]) -> Optional[Beside]:
        """None for a result without them (SLURM's, or written before issue 46)."""
        ids, cells, gpus = (env.get(k) for k in FIELDS)
        if not (isinstance(ids, str) and isinstance(cells, int) and isinstance(gpus, int)):
            return None
        return cls(ids, cells, gpus)


Look = dict[int, tuple[bool, str]]  # another GPU's index -> (busy, the id of the job started on it last)


@dataclass(frozen=True)
class Spec:
    mine: tuple[int, ...]  # the GPUs the cell holds (every GPU, for a cell run alone)
    gpus: tuple[int, ...]  # those it runs on
    locks: dict[int, str]  # every GPU's lock file


def spec_of(environ: Mapping[str, str]) -> Optional[Spec]:
    """BESIDE_ENV's; None where unset (not a local job) or unreadable."""
    try:
        spec = json.loads(environ[BESIDE_ENV])
        return Spec(tuple(int(g) for g in spec["mine"]), tuple(int(g) for g in spec["gpus"]),
                    {int(g): str(p) for g, p in spec["locks"].items()})
    except (KeyError, ValueError, TypeError, AttributeError):
        return None


def look(environ: Mapping[str, str]) -> Optional[Look]:
    """The other GPUs, now."""
    spec = spec_of(environ)
    if spec is None:
        return None
    return {gpu: _probe(path) for gpu, path in spec.locks.items() if gpu not in spec.mine}


def _probe(path: str) -> tuple[bool, str]:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ENOENT:  # never used yet
            return False, ""
        raise
    with open(fd) as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            busy = False
        except BlockingIOError:
            busy = True
        with contextlib.suppress(OSError, UnicodeDecodeError):
            return busy, handle.read(64).strip()
    return busy, ""


def beside(gpu_ids: tuple[int, ...], first: Look, last: Look) -> Beside:
    """The cells and GPUs beside a run, from its first and last look (see the module's docstring)."""
    gpus, jobs = set(), set()
    for gpu in first.keys() | last.keys():
        busy_then, job_then = first.get(gpu, (False, ""))
        busy_now, job_now = last.get(gpu, (False, ""))
        started = job_now != job_then and bool(job_now)
        if busy_then:
            jobs.add(job_then)
        if busy_now or started:
            jobs.add(job_now)
        if busy_then or busy_now or started:
            gpus.add(gpu)
    return Beside(",".join(map(str, gpu_ids)), len(jobs), len(gpus))
