"""Off-cluster queue: a background process that runs the given cells on this machine, each as
soon as GPUs for it are free (placement.py), the cells that fit beside others first
(placement.packing_order): side by side on disjoint GPUs where the machine has several, one at
a time where it has none (or with --exclusive). Never two cells
on one GPU, even beside another queue's cells or a killed queue's job still running
(machine_lock.py). `submit` starts it detached, so it outlives the shell; it records each job it
starts.

    python -m orchestrator.local.queue RESULTS_DIR [--exclusive] CELL_ID...
"""
from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import Any

from jobs.core.cell import StudyCell
from jobs.core.kinds import kind_named
from jobs.core.regular_file import open_regular
from jobs.core.result import read_good_result
from results_format import registry
from orchestrator.local import machine_lock
from orchestrator.local.machine import Machine, this_machine
from orchestrator.local.placement import (RUN_MAX, WHOLE, cores_for, first_fit, machine_slots, packing_order,
                                         run_length, slots_needed)
from orchestrator.plan.plan import Plan, read_plan
from results_format.registry import Submission
from orchestrator.local.warm_start import WarmServer, warm_server

QUEUE_LOG = "local-queue.log"  # in the plan's log dir
POLL_S = 0.1  # a look at the jobs' controller processes and the GPUs' locks: cheap
EXCLUSIVE = "--exclusive"


def queue_cells(results_dir: Path, cell_ids: list[str], exclusive: bool = False) -> None:
    plan = read_plan(results_dir)
    pid = os.getpid()
    registry.append_entries(results_dir, [
        Submission(cid, "local", None, plan.array_of(cid).name, registry.now_iso(), queue_pid=pid) for cid in cell_ids
    ])
    print(f"queued {len(cell_ids)}", flush=True)  # `submit` waits for this line
    _detach_stdout(Path(plan.log_dir) / QUEUE_LOG)
    machine_lock.check_lock_dir()
    machine = this_machine()
    with warm_server(job_modules(plan, cell_ids), _say) as warm:
        Runner(plan, machine, exclusive, warm).run(cell_ids)


class Runner:
    """Starts the cells in order as their GPUs free up, and watches the jobs it started."""

    def __init__(self, plan: Plan, machine: Machine, exclusive: bool, warm: WarmServer) -> None:
        self.plan, self.machine, self.exclusive, self.warm = plan, machine, exclusive, warm
        self.slots = machine_slots(machine)
        self.cores = tuple(sorted(os.sched_getaffinity(0)))
        self.running: list[tuple[str, Any, machine_lock.Claim]] = []  # (its cells' ids, a job, its GPUs' claim)

    def run(self, cell_ids: list[str]) -> None:
        shapes = [(self.plan.array_of(cid).name, self.wants(cid)) for cid in cell_ids]
        waiting = [cell_ids[i] for i in packing_order(shapes, len(self.slots))]
        said = ""
        while waiting or self.running:
            self.reap()
            self.drop_done(waiting)
            if waiting and self.start(waiting):
                continue
            if waiting and said != waiting[0]:
                said = waiting[0]
                _say("waiting: cells running on this machine hold the GPUs it needs "
                     f"({machine_lock.lock_dir()}); it starts when they end", cell_id=said)
            time.sleep(POLL_S)

    def drop_done(self, waiting: list[str]) -> None:
        """The cells at the head that have a good result already (a rerun never redoes them)."""
        while waiting and read_good_result(Path(self.plan.results_dir), waiting[0]) is not None:
            waiting.pop(0)

    def wants(self, cell_id: str) -> int:
        return slots_needed(self.plan.cell(cell_id), self.machine, self.exclusive)

    def start(self, waiting: list[str]) -> bool:
        """Start the next run of one shape whose GPUs are free: the head's, else the first later
        shape's that fits in the GPUs left (a pair waiting for its second GPU does not keep the
        free ones idle), taking its cells off `waiting`; False if none fits yet."""
        from orchestrator.local.launch import start_local_job  # submitit: only in this process

        with machine_lock.placing():
            free = machine_lock.free_slots(self.slots)
            heads = self.shape_heads(waiting)
            found = first_fit([self.wants(waiting[at]) for at in heads], free, self.slots)
            if found is None:
                return False
            at, placed = heads[found[0]], found[1]
            cells = self.run_of(waiting, at, self.run_length(waiting, at, len(placed)))
            claim = machine_lock.Claim(placed)
            try:
                job, subs = start_local_job(self.plan, cells, os.getpid(), placed, self.slots,
                                            cores_for(placed, self.slots, self.cores), self.warm.started())
            except BaseException:
                claim.release()
                raise
            claim.record(job.job_id)
        registry.append_entries(Path(self.plan.results_dir), subs)
        self.running.append((", ".join(c.cell_id for c in cells), job, claim))
        where = "" if placed == (WHOLE,) else f" on GPU {','.join(map(str, placed))}"
        for cell in cells:
            print(f"{cell.cell_id}: started local job {job.job_id}{where}", flush=True)
        return True

    def shape_heads(self, waiting: list[str]) -> list[int]:
        """Where each run of one shape begins in `waiting`, of its first RUN_MAX per slot (a study of
        100,000 is not read to its end at each look)."""
        near = waiting[:RUN_MAX * len(self.slots)]
        return [i for i, cid in enumerate(near) if i == 0 or self.array(cid) != self.array(near[i - 1])]

    def array(self, cell_id: str) -> str:
        return self.plan.array_of(cell_id).name

    def run_length(self, waiting: list[str], at: int, want: int) -> int:
        """How many cells the next job runs (placement.run_length). One without GPUs: there a set-up is
        a fraction of a second (no CUDA context to make), and one cell at a time runs anyway."""
        return run_length(self.same_shape_ahead(waiting, at), want, len(self.slots)) if self.machine.gpus else 1

    def same_shape_ahead(self, waiting: list[str], at: int) -> int:
        """How many cells from `at` on are of its shape (its array), of the first RUN_MAX per slot."""
        near = waiting[at:at + RUN_MAX * len(self.slots)]
        return next((i for i, cid in enumerate(near) if self.array(cid) != self.array(near[0])), len(near))

    def run_of(self, waiting: list[str], at: int, length: int) -> list[StudyCell]:
        """The next `length` cells of the shape at `at`, off `waiting` (those with a good result dropped)."""
        array = self.array(waiting[at])
        cells = [self.plan.cell(waiting.pop(at))]
        while len(cells) < length and at < len(waiting) and self.array(waiting[at]) == array:
            cid = waiting.pop(at)
            if read_good_result(Path(self.plan.results_dir), cid) is None:
                cells.append(self.plan.cell(cid))
        return cells

    def reap(self) -> None:
        for entry in list(self.running):
            cells, job, claim = entry
            if job.done():
                claim.release()
                self.running.remove(entry)
                print(f"{cells}: ended ({job.state})", flush=True)


def job_modules(plan, cell_ids: list[str]) -> list[str]:
    """What every task of these cells imports before its first line: submitit's, and each kind's run."""
    runs = {kind_named(plan.cell(cid).kind).run.split(":")[0] for cid in cell_ids}
    return ["orchestrator.local.launch", "submitit.core.submission", *sorted(runs)]


def _say(text: str, cell_id: str = "") -> None:
    print(f"{cell_id}: {text}" if cell_id else text, flush=True)


def _detach_stdout(log: Path) -> None:
    log.parent.mkdir(parents=True, exist_ok=True)
    with open_regular(log, "local queue log", os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW) as f:
        os.dup2(f.fileno(), 1)
        os.dup2(f.fileno(), 2)


if __name__ == "__main__":
    queue_cells(Path(sys.argv[1]), [a for a in sys.argv[2:] if a != EXCLUSIVE], EXCLUSIVE in sys.argv[2:])
