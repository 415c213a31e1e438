"""Run one command cell: each process of the job (a SLURM task, a local rank) starts the user's
argv, no shell, with the environment torchrun gives (RANK, LOCAL_RANK, WORLD_SIZE,
LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT) and ORCHESTRATOR_METRICS, its own metrics file in
the cell's folder (<results>/command/<cell_id>/). Its stderr is passed on to the job's log, its
last lines kept. Every rank but 0 leaves its exit in the folder; rank 0 waits for them, reads its
own metrics and writes the result in the common envelope: ok with the metrics, or failed with the
reason and the stderr's last lines. No torch: the script brings its own.
"""
from __future__ import annotations

import collections
import dataclasses
import datetime as dt
import json
import os
import platform
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from jobs.command.cell import CommandCell
from jobs.command.metrics import MetricsError, parse_metrics, timed_index
from jobs.command.result import CommandFindings
from jobs.core.atomic import write_json_atomic
from jobs.core.regular_file import NotRegular, TooLarge, read_regular
from jobs.core.result import Result, Status, read_good_result, write_result
from jobs.runtime import launch

METRICS_ENV = "ORCHESTRATOR_METRICS"
FOLDER = "command"  # <results>/command/<cell_id>/: the ranks' metrics and exits
METRICS_MAX = 16 * 2**20  # bytes of one metrics file
TAIL_LINES = 20  # of the script's stderr, kept for the result's error
MAX_LINE = 500  # characters kept of each (a progress bar redrawn with \r is one long line)
WAIT_S = 300.0  # rank 0 waits this long for the other ranks to end after its own script did
WAIT_FAILED_S = 10.0  # ... or this long when its own failed (the others may wait for it forever)


class ScriptFailed(RuntimeError):
    """The cell's script failed; the message's last line says why (status shows it)."""


@dataclass(frozen=True)
class Exit:
    rank: int
    code: Optional[int]  # None: it never started
    why: str  # "" when it ran to exit code 0; else the reason in one line
    tail: tuple[str, ...]  # its stderr's last lines
    host: str
    node: Optional[str] = None  # SLURM's name of its node


def cell_folder(out_dir: Path, cell_id: str) -> Path:
    return Path(out_dir) / FOLDER / cell_id


def metrics_path(out_dir: Path, cell_id: str, rank: int) -> Path:
    return cell_folder(out_dir, cell_id) / f"metrics.rank{rank}.jsonl"


def run(cell: CommandCell, out_dir: Path, data_dir: Path) -> str:
    """Run this process's rank of the cell; rank 0 writes the result. Returns the status (raises
    ScriptFailed after writing a failed result). A good result already on disk is kept."""
    done = read_good_result(out_dir, cell.cell_id)
    if done is not None:
        return done.status
    place, started = launch.detect(), dt.datetime.now(dt.UTC).isoformat()
    token = attempt(place)
    mine = run_script(cell, place, Path(out_dir))
    if place.rank != 0:
        write_json_atomic(_exit_path(out_dir, cell.cell_id, place.rank), {"token": token, **dataclasses.asdict(mine)})
        if mine.why:
            raise ScriptFailed(mine.why)
        return Status.OK
    others = wait_for_ranks(out_dir, cell.cell_id, place.world_size, token, WAIT_FAILED_S if mine.why else WAIT_S)
    result = Result(cell.cell_id, cell.to_dict(), Status.OK, env=environment(cell, place, [mine, *others], started))
    try:
        result.body = findings(cell, place, Path(out_dir), [mine, *others])
    except ScriptFailed as exc:
        result.status, result.error = Status.FAILED, str(exc)
    write_result(Path(out_dir), result)
    print(f"[{cell.cell_id}] result {result.status}", flush=True)
    if result.error:
        raise ScriptFailed(result.error)
    return result.status


def run_script(cell: CommandCell, place: launch.Placement, out_dir: Path) -> Exit:
    """Start the argv in the cell's workdir, this rank's stderr passed on and its tail kept."""
    metrics = metrics_path(out_dir, cell.cell_id, place.rank)
    metrics.parent.mkdir(parents=True, exist_ok=True)
    metrics.unlink(missing_ok=True)  # an earlier attempt's lines are not this run's
    env = dict(os.environ, **torchrun_env(place), **{METRICS_ENV: str(metrics.resolve())})
    argv, host = cell.command_line(), socket.gethostname()
    tail: collections.deque[str] = collections.deque(maxlen=TAIL_LINES)
    try:
        proc = subprocess.Popen(argv, cwd=cell.workdir, env=env, stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    except OSError as exc:
        return Exit(place.rank, None, f"cannot start {argv[0]!r} in {cell.workdir}: {exc.strerror}", (), host,
                    place.node_name)
    assert proc.stderr is not None
    for raw in proc.stderr:
        line = raw.decode(errors="replace")
        sys.stderr.write(line)
        tail.append(line.rstrip("\n")[:MAX_LINE])
    sys.stderr.flush()
    code = proc.wait()
    why = "" if not code else (f"the script exited with code {code}" if code > 0 else
                               f"the script was killed by signal {-code}")
    return Exit(place.rank, code, why, tuple(tail), host, place.node_name)


def torchrun_env(place: launch.Placement) -> dict[str, str]:
    """The variables torchrun gives each process; a free port where no launcher chose one."""
    return {"RANK": str(place.rank), "LOCAL_RANK": str(place.local_rank), "WORLD_SIZE": str(place.world_size),
            "LOCAL_WORLD_SIZE": str(place.local_world_size), "MASTER_ADDR": place.master_addr,
            "MASTER_PORT": str(place.master_port or _free_port())}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def attempt(place: launch.Placement) -> str:
    """What the ranks of one attempt share and no other attempt does: its job, array task, rendezvous
    port and SLURM requeue count (an earlier attempt's exits are not this one's)."""
    return f"{place.job_id}:{place.array_task_id}:{place.master_port}:{os.environ.get('SLURM_RESTART_COUNT', '0')}"


def _exit_path(out_dir: Path, cell_id: str, rank: int) -> Path:
    return cell_folder(out_dir, cell_id) / f"exit.rank{rank}.json"


def wait_for_ranks(out_dir: Path, cell_id: str, world_size: int, token: str, wait_s: float) -> list[Exit]:
    """The other ranks' exits of this attempt, as each wrote it; one that has not written it
    within wait_s counts as failed."""
    deadline, found = time.monotonic() + wait_s, {}
    while True:
        for rank in range(1, world_size):
            if rank not in found and (got := _read_exit(_exit_path(out_dir, cell_id, rank), token)) is not None:
                found[rank] = got
        if len(found) == world_size - 1 or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    return [found.get(rank) or Exit(rank, None, f"rank {rank} did not end within {wait_s:g} s of rank 0", (), "")
            for rank in range(1, world_size)]


def _read_exit(path: Path, token: str) -> Optional[Exit]:
    try:
        data = json.loads(read_regular(path, "exit file", 2**20))
        if data.pop("token") != token:
            return None
        return Exit(int(data["rank"]), data["code"], str(data["why"]), tuple(map(str, data["tail"])), str(data["host"]),
                    data["node"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, NotRegular, TooLarge):
        return None  # not yet written (or not this attempt's): waited for


def findings(cell: CommandCell, place: launch.Placement, out_dir: Path, exits: list[Exit]) -> CommandFindings:
    """Rank 0's metrics when every rank's script exited 0; ScriptFailed with the first failure
    (its stderr's last lines, and the reason last: status shows the last line)."""
    for e in exits:
        if e.why:
            raise ScriptFailed(_failure(e.why if e.rank == 0 else f"rank {e.rank}: {e.why}", e.tail))
    path = metrics_path(out_dir, cell.cell_id, 0)
    try:
        text = read_regular(path, "metrics file", METRICS_MAX).decode("utf-8") if path.exists() else ""
        lines = parse_metrics(text)
        return CommandFindings(place.world_size, lines, timed_index(lines, cell.timed_epoch))
    except (MetricsError, UnicodeDecodeError, NotRegular, TooLarge, OSError) as exc:
        raise ScriptFailed(_failure(f"{path.name}: {exc}", exits[0].tail)) from None


def _failure(why: str, tail: tuple[str, ...]) -> str:
    """The error: the stderr's last lines, then the reason with the stderr's last line beside it."""
    shown = [line for line in tail if line.strip()]
    last = f" (its stderr ends: {shown[-1].strip()[:200]})" if shown else ""
    lines = [f"stderr's last {len(shown)} lines:", *shown] if shown else []
    return "\n".join([*lines, why + last])


def environment(cell: CommandCell, place: launch.Placement, exits: list[Exit], started: str) -> dict[str, Any]:
    """The result's env, as far as it is known without torch: hosts, GPUs (nvidia-smi), launcher, times."""
    return {"device": "cuda" if cell.gpus_per_node else "cpu", "gpu_model": gpu_model() if cell.gpus_per_node else "cpu",
            "python": platform.python_version(), "hostname": socket.gethostname(),
            "hostnames": sorted({e.host for e in exits if e.host}), "nodes": sorted({e.node for e in exits if e.node}),
            "world_size": place.world_size,
            "launcher": place.launcher, "job_id": place.job_id, "array_task_id": place.array_task_id,
            "started_at": started, "ended_at": dt.datetime.now(dt.UTC).isoformat()}


def gpu_model() -> Optional[str]:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                             text=True, timeout=20, check=True)
        return out.stdout.split("\n")[0].strip() or None
    except (OSError, subprocess.SubprocessError):
        return None
