"""What a results dir holds, and where: the one description that plan, the jobs, status and
collect all read (jobs/ is the one package every other may import).

    <cell_id>.json      one result per cell (jobs.core.result)
    plan.json           the plan: cells, arrays, cluster (orchestrator.plan.plan)
    study.toml          the study file the plan was made from
    sbatch/<array>.sh   each array's sbatch text
    registry.jsonl      cell -> job, appended by submit (results_format.registry)
    spent.json          the GPU-hours each job held, written by `collect` (orchestrator.budget.spent)
    .submit.lock        held by submit and cancel
    .status-cache       what status needs of each result file, kept while the file is unchanged
                        (orchestrator.watch.result_cache); deleting it costs one slower status
    checkpoints/<cell_id>.pt   the last finished epoch of a running cell
    nets/<training_id>.pt      a trained PTQ network, reused by every cell that trains the same way
    logs/               every job's stdout and stderr
"""
from __future__ import annotations

import os
import re
from pathlib import Path

PLAN_FILE = "plan.json"
STUDY_FILE = "study.toml"
SBATCH_DIR = "sbatch"
REGISTRY_FILE = "registry.jsonl"
SPENT_FILE = "spent.json"
LOCK_FILE = ".submit.lock"
STATUS_CACHE = ".status-cache"  # JSON, but no .json: not mistaken for a result or a plan
CHECKPOINT_DIR = "checkpoints"
NETS_DIR = "nets"
LOG_DIR = "logs"
CELL_ID = re.compile(r"[0-9a-f]{12}")  # a cell id is 12 hex digits (jobs.core.cell.content_id)
RESULT_NAME = re.compile(r"[0-9a-f]{12}\.json")


def check_cell_id(cell_id: object) -> str:
    """`cell_id` when it is a cell id, so a path made of it stays in its dir; else ValueError naming it."""
    if not isinstance(cell_id, str) or not CELL_ID.fullmatch(cell_id):
        raise ValueError(f"{cell_id!r} is not a cell id (12 hex digits)")
    return cell_id


def result_path(results_dir: Path, cell_id: str) -> Path:
    return Path(results_dir) / f"{check_cell_id(cell_id)}.json"


def unreadable_dir(results_dir: Path, listing: bool = True) -> str:
    """Why you cannot read the results dir (its files, and with `listing` its list of files), in one
    line naming it and the fix; "" when you can. Listing matters: a dir you may open files in but not
    list would hide every result, each done cell taken for a failed one."""
    need, words = (os.R_OK | os.X_OK, "list or read") if listing else (os.X_OK, "read")
    if os.access(results_dir, need) or not os.path.isdir(results_dir):  # none there: its caller says so
        return ""
    mode = os.stat(results_dir).st_mode & 0o777
    return (f"results dir {results_dir} is mode {mode:04o}: you cannot {words} its files; ask its owner to make it "
            f"readable (chmod a+rx {results_dir}), or pass another --results")


def result_files(results_dir: Path) -> list[Path]:
    """Files named as results are: <cell_id>.json (plan.json and other JSON a user keeps
    beside them are not results)."""
    return sorted(p for p in Path(results_dir).glob("*.json") if RESULT_NAME.fullmatch(p.name))


def checkpoint_path(results_dir: Path, cell_id: str) -> Path:
    return Path(results_dir) / CHECKPOINT_DIR / f"{check_cell_id(cell_id)}.pt"


def net_path(results_dir: Path, training_id: str) -> Path:
    return Path(results_dir) / NETS_DIR / f"{training_id}.pt"


# A packed task's log: each cell's part begins with this line (jobs.runtime.reuse), and `logs CELL` cuts at it.
CELL_LOG_HEADER = re.compile(r"^=== cell (\d+)/(\d+): ([0-9a-f]{12})\b.*===$")


def cell_log_header(cell_id: str, index: int, count: int, label: str) -> str:
    """The line that opens cell `index` (from 0) of `count` in a packed task's log."""
    return f"=== cell {index + 1}/{count}: {check_cell_id(cell_id)} {label} ==="


def cell_part_of_log(text: str, cell_id: str) -> str:
    """The lines of a packed task's log under `cell_id`'s header (a requeued task runs it again: its
    last part); the whole text where no header names any cell (a task of one cell)."""
    lines = text.splitlines(keepends=True)
    heads = [(i, m.group(3)) for i, line in enumerate(lines) if (m := CELL_LOG_HEADER.match(line.rstrip("\n")))]
    if not heads:
        return text
    mine = [i for i, (_, found) in enumerate(heads) if found == cell_id]
    if not mine:
        return ""
    start = heads[mine[-1]][0]
    end = heads[mine[-1] + 1][0] if mine[-1] + 1 < len(heads) else len(lines)
    return "".join(lines[start:end])
