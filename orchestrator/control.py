"""Act on chosen cells: pick them by id, id prefix or label; show or follow their logs; cancel them."""
from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from typing import Callable, Iterator, Optional

from orchestrator import registry, scheduler
from orchestrator.errors import PlanError, UserError
from orchestrator.plan import Plan
from orchestrator.registry import Cancelled, Submission
from orchestrator.scheduler import SlurmClient
from orchestrator.states import LIVE_WORDS
from orchestrator.status import LOCAL_JOB_MARKER, QUEUE_MARKER, Monitor

FOLLOW_READ_S = 0.5  # how often -f reads the log files (the scheduler is asked far less often)


def select_cells(plan: Plan, names: list[str]) -> list[str]:
    """Cell ids for each name: a whole id, a unique id prefix (4+ characters), or a label (all that match)."""
    chosen: list[str] = []
    for name in names:
        matches = [cid for c, cid in zip(plan.cells, plan.cell_ids) if cid == name or c.label == name]
        if not matches and len(name) >= 4:
            matches = [cid for cid in plan.cell_ids if cid.startswith(name)]
        if not matches:
            raise PlanError(f"no cell of study {plan.study} matches {name!r}; `status` lists cell ids and labels")
        chosen += [m for m in matches if m not in chosen]
    return chosen


def log_files(sub: Optional[Submission], cell_id: str) -> tuple[Path, Path]:
    if sub is None:
        raise UserError(f"cell {cell_id} was never submitted: no logs; `submit` queues it")
    if not sub.log_out or not sub.log_err:
        raise UserError(f"cell {cell_id} waits in the local queue and has no log yet; try again when it runs")
    return Path(sub.log_out), Path(sub.log_err)


def tail_lines(path: Path, lines: int) -> str:
    """The last `lines` lines of a file (0: all of it), or "" when it does not exist yet."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    if lines <= 0:
        return text
    return "".join(text.splitlines(keepends=True)[-lines:])


def follow(paths: list[Path], ended: Callable[[], bool], check_every_s: float) -> Iterator[tuple[Path, str]]:
    """New text of each file as it is written, until `ended()` (asked every check_every_s) says
    the cell is over; then what is left is read once more."""
    offsets = {p: (p.stat().st_size if p.exists() else 0) for p in paths}
    next_check = time.monotonic() + check_every_s
    while True:
        over = False
        if time.monotonic() >= next_check:
            over, next_check = ended(), time.monotonic() + check_every_s
        for path in paths:
            try:
                with open(path, "rb") as f:
                    f.seek(offsets[path])
                    chunk = f.read()
            except OSError:
                continue
            if chunk:
                offsets[path] += len(chunk)
                yield path, chunk.decode(errors="replace")
        if over:
            return
        time.sleep(FOLLOW_READ_S)


def cell_ended(monitor: Monitor, cell_id: str) -> Callable[[], bool]:
    def ended() -> bool:
        row = next(r for r in monitor.refresh().rows if r.cell_id == cell_id)
        return row.state.is_terminal
    return ended


def cancel(plan: Plan, cell_ids: list[str], client: Optional[SlurmClient] = None) -> list[str]:
    """Cancel the live jobs of these cells (one scancel for all); returns the cells cancelled."""
    results_dir = Path(plan.results_dir)
    client = client or SlurmClient()
    with registry.submit_lock(results_dir):
        monitor = Monitor(plan, client)
        report = monitor.refresh(locked=True)
        subs = monitor.subs
        live = cancellable(report.rows, subs, set(cell_ids))
        slurm = [subs[c].job_id for c in live if subs[c].executor == "slurm" and subs[c].job_id]
        client.cancel(slurm)
        local = [c for c in live if subs[c].executor == "local"]
        queued_locally = {r.cell_id for r in report.rows if r.state.is_live and r.cell_id in subs
                          and subs[r.cell_id].executor == "local"}
        for cid in local:  # the queue itself only when all its cells go: it runs them one by one
            _stop_local(subs[cid], stop_queue=queued_locally <= set(local))
        job_ids = tuple(slurm + [subs[c].job_id or f"queue-{subs[c].queue_pid}" for c in local])
        if job_ids:
            registry.append(results_dir, [Cancelled(job_ids, registry.now_iso())])
    return live


def cancellable(rows, subs: dict[str, Submission], chosen: set[str]) -> list[str]:
    """Chosen cells with a live job. A done cell's job may still be queued (its result came
    from elsewhere); a COMPLETING one is ending anyway."""
    return [r.cell_id for r in rows if r.cell_id in chosen and r.cell_id in subs
            and (r.state.is_live or (r.job_state in LIVE_WORDS and r.job_state != "COMPLETING"))]


def _stop_local(sub: Submission, stop_queue: bool) -> None:
    """Stop the local queue first if asked (SIGTERM: it starts nothing more), then the cell's
    job: SIGINT, as submitit's own cancel does. Its controller then kills the ranks; a SIGTERM
    would only be passed on to them, and submitit's tasks ignore SIGTERM (on SLURM it comes
    before a preemption). Each pid is checked to be ours first."""
    queue = sub.queue_pid if stop_queue else None
    job = int(sub.job_id) if sub.job_id else None
    for pid, marker, sig in ((queue, QUEUE_MARKER, signal.SIGTERM), (job, LOCAL_JOB_MARKER, signal.SIGINT)):
        if pid and scheduler.pid_alive(pid, marker):
            try:
                os.kill(pid, sig)
            except OSError:
                pass
