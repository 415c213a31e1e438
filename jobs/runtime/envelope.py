"""The one job envelope: what every kind's run does around its body.

A kind's run is `run_job(cell, out_dir, data_dir, body, ...)`: a good result already on disk
is kept and nothing runs; the ranks join one process group; the environment is recorded; the
kind's body runs and returns its findings; an out-of-memory is an answer (oom), any other
exception a failed result whose traceback the result keeps (and the job still fails); rank 0
writes the result atomically and removes the cell's checkpoint. Every second of it is in one of
the result's phases (jobs.core.phases): set-up until the body starts, then the body's, which a
body may hand back to set-up or give to its parts (job.clock).
"""
from __future__ import annotations

import datetime as dt
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import torch
import torch.distributed as dist

from jobs.core import beside
from jobs.core.cell import StudyCell
from jobs.core.layout import checkpoint_path
from jobs.core.phases import PhaseClock, launch_s, process_age_s
from jobs.core.result import Result, Status, read_good_result, write_result
from jobs.runtime import environment, launch
from jobs.runtime.oom import OutOfMemory, is_oom

GROUP_TIMEOUT = dt.timedelta(minutes=10)
Log = Callable[[str], None]


@dataclass(frozen=True)
class Job:
    """What a kind's body runs with."""

    place: launch.Placement
    device: torch.device
    out_dir: Path
    data_dir: Path
    env: dict[str, Any]  # the result's environment: a body may add its own facts
    log: Log  # rank 0 prints, tagged with the cell's id; the other ranks stay quiet
    clock: PhaseClock  # where the body's time goes: its set-up, its parts, its writes (jobs.core.phases)


def run_job(cell: StudyCell, out_dir: Path, data_dir: Path, body: Callable[[Job], Any],
            device_for: Callable[[launch.Placement], torch.device], backend: Optional[str] = None,
            run_seed: Optional[int] = None) -> str:
    """Run the cell's body in the envelope; returns the result's status. `device_for` picks this
    rank's device (and may refuse, raising RuntimeError: a failed result says why); `backend`
    is the process group's (default: nccl on a GPU, gloo on the CPU)."""
    clock, age = PhaseClock("setup"), process_age_s()  # the job's first line: what came before is its start
    launched = None if age is None else launch_s(time.time() - age, os.environ)
    out_dir, data_dir = Path(out_dir), Path(data_dir)
    done = read_good_result(out_dir, cell.cell_id)
    if done is not None:
        return done.status
    place = launch.detect()
    log: Log = (lambda msg: print(f"[{cell.cell_id}] {msg}", flush=True)) if place.rank == 0 else (lambda msg: None)
    started = dt.datetime.now(dt.UTC).isoformat()
    neighbours = beside.look(os.environ)  # the other GPUs of this machine, as the run starts
    failure: Optional[BaseException] = None
    try:
        device = device_for(place)
    except RuntimeError as exc:  # recorded in the result like any failure of the body
        device, failure = torch.device("cpu"), exc
    result = Result(cell_id=cell.cell_id, cell=cell.to_dict(), status=Status.OK, env=environment.describe(device),
                    run_seed=run_seed)
    grouped = False
    try:
        if failure is not None:
            raise failure
        if place.world_size > 1:
            cuda = device.type == "cuda"
            dist.init_process_group(backend or ("nccl" if cuda else "gloo"),
                                    init_method=f"tcp://{place.master_addr}:{place.master_port}", rank=place.rank,
                                    world_size=place.world_size, timeout=GROUP_TIMEOUT,
                                    device_id=device if cuda else None)  # NCCL: this rank's GPU, bound now
            grouped = True
        environment.gather_hosts(place, result.env)
        log(f"{cell.label} on {result.env['gpu_model']}, {place.world_size} rank(s) ({place.launcher})")
        clock.switch("body")
        result.body = body(Job(place, device, out_dir, data_dir, result.env, log, clock))
    except OutOfMemory as exc:
        result.status, result.error = Status.OOM, str(exc)
    except Exception as exc:  # the result records it; the job still fails
        if is_oom(exc):
            result.status, result.error = Status.OOM, str(exc).splitlines()[0]
        else:
            environment.record_failure(result, exc)
            failure = exc
    clock.switch("write")
    environment.finish(result, place, device, started, neighbours)
    result.phases = clock.phases(age, launched)
    if place.rank == 0:
        path = write_result(out_dir, result)
        checkpoint_path(out_dir, cell.cell_id).unlink(missing_ok=True)
        log(f"result {result.status}: {path}")
    if grouped and failure is None:
        dist.destroy_process_group()
    if failure is not None:
        raise failure
    return result.status
