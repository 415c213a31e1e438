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

import dataclasses
import os
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import torch

from jobs.core import beside
from jobs.core.cell import StudyCell
from jobs.core.layout import checkpoint_path
from jobs.core.phases import PhaseClock
from jobs.core.result import Result, Status, read_good_result, write_result
from jobs.runtime import environment, launch, reuse
from jobs.runtime.oom import OutOfMemory, is_oom

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
    clock, began = PhaseClock("setup"), reuse.cell_started()  # the job's first line: what came before is its start
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
            reuse.join_group(backend or ("nccl" if cuda else "gloo"), f"tcp://{place.master_addr}:{place.master_port}",
                             place.rank, place.world_size, device if cuda else None)  # NCCL: this rank's GPU, bound now
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
    result.phases = dataclasses.replace(clock.phases(began.start_s, began.launch_s), cells_before=began.cells_before)
    if place.rank == 0:
        path = write_result(out_dir, result)
        checkpoint_path(out_dir, cell.cell_id).unlink(missing_ok=True)
        log(f"result {result.status}: {path}")
    if grouped:
        reuse.cell_grouped_end(failed=failure is not None)
    reuse.cell_ended()
    if failure is not None:
        raise failure
    return result.status
