"""Run one cell with no SLURM: python -m jobs --cell cell.json --out DIR [--data DIR].

A DDP cell started outside any launcher starts its ranks here, one process each, on this machine.
"""
from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from jobs.core import phases
from jobs.runtime import launch
from jobs.core.cell import CellError
from jobs.core.cell import StudyCell
from jobs.core.kinds import cell_from_dict, run_cell
from jobs.core.result import Status


def read_cell(path: Path) -> StudyCell:
    data = json.loads(Path(path).read_text())
    return cell_from_dict(data.get("cell", data))  # a bare cell, or a plan/result entry holding one


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spawn_ranks(world_size: int) -> int:
    """Start world_size copies of this command as torchrun would; the worst exit status wins.
    The ranks' task started with this process (unless a launcher before it said when)."""
    port = str(free_port())
    age = phases.process_age_s()
    launched = os.environ.get(phases.LAUNCHED_AT_ENV) or str(time.time() - (age or 0.0))
    procs = []
    for rank in range(world_size):
        env = dict(os.environ, RANK=str(rank), LOCAL_RANK=str(rank), WORLD_SIZE=str(world_size),
                   LOCAL_WORLD_SIZE=str(world_size),
                   MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
        env[phases.LAUNCHED_AT_ENV] = launched
        procs.append(subprocess.Popen([sys.executable, "-m", "jobs", *sys.argv[1:]], env=env))
    return max(p.wait() for p in procs)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m jobs", description=__doc__.splitlines()[0])
    parser.add_argument("--cell", type=Path, required=True, help="JSON file holding the cell")
    parser.add_argument("--out", type=Path, required=True, help="results directory")
    parser.add_argument("--data", type=Path, default=Path("data"), help="data directory (default: ./data)")
    args = parser.parse_args(argv)
    try:
        cell = read_cell(args.cell)
    except (OSError, ValueError, CellError) as exc:
        print(f"error: cannot read cell file {args.cell}: {exc}", file=sys.stderr)
        return 2
    ranks = cell.nodes * cell.tasks_per_node
    if ranks > 1 and launch.detect().launcher == "none":
        return spawn_ranks(ranks)
    status = run_cell(cell, args.out, args.data)
    return 0 if Status(status).is_answer else 1


if __name__ == "__main__":
    from jobs.runtime.process_exit import exit_now

    exit_now(main())
