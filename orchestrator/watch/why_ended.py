"""Why a cell's job ended, in one line that names the fix (pure).

The evidence, best first: the result file's error (the job's own traceback), SLURM's final
state (squeue -t all, or sacct), and the job's stderr (slurmstepd writes "CANCELLED ... DUE
TO TIME LIMIT" there, and Python its traceback) when accounting cannot say.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Optional

from jobs.core.regular_file import read_end
from results_format.states import SLURM_STATES, CellState

_STEPD = re.compile(r"\*\*\* (?:JOB|STEP) \S+ ON \S+ CANCELLED AT \S+(?: DUE TO ([A-Z ]+?))? \*\*\*")
_STEPD_WORDS = {"TIME LIMIT": "TIMEOUT", "PREEMPTION": "PREEMPTED", "NODE FAILURE": "NODE_FAIL", None: "CANCELLED"}
_OOM = re.compile(r"oom[-_ ]kill|Exceeded job memory limit|out of memory|OUT_OF_MEMORY", re.IGNORECASE)
_EXCEPTION = re.compile(r"^(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Interrupt|Exit)\b(?::.*)?$")
LOG_TAIL_BYTES = 16_384


def python_error(text: str) -> str:
    """The last `SomeError: message` line of a traceback in a log, or ""."""
    for line in reversed(text.splitlines()):
        if _EXCEPTION.match(line.strip()):
            return line.strip()
    return ""


def word_from_log(text: str) -> str:
    """SLURM's reason as slurmstepd or the kernel wrote it into the job's stderr, or "".
    Only what follows the last requeue counts: the log is appended to across restarts."""
    text = text.rsplit("DUE TO JOB REQUEUE", 1)[-1]
    words = [_STEPD_WORDS.get(m.group(1), "CANCELLED") for m in _STEPD.finditer(text)]
    if words:
        return words[-1]
    return "OUT_OF_MEMORY" if _OOM.search(text) else ""


def read_tail(path: Optional[str], size: int = LOG_TAIL_BYTES) -> str:
    if not path:
        return ""
    try:
        return read_end(Path(path), "log file", size)[0].decode(errors="replace")
    except OSError:  # gone, or no regular file (a FIFO would never end the read): no evidence
        return ""


def explain(word: str, node: str = "", exit_reason: str = "", error_line: str = "",
            time_min: Optional[int] = None) -> tuple[CellState, str]:
    """(state, detail) for a job that ended in SLURM state `word` without a good result."""
    state = SLURM_STATES.get(word, CellState.FAILED)
    retry = "submit --retry-failed"
    if word == "OUT_OF_MEMORY":
        return state, f"OUT_OF_MEMORY: the job used more host memory than it asked; raise mem_gb, then {retry}"
    if word in ("TIMEOUT", "DEADLINE"):
        limit = f"its {time_min} min limit" if time_min else "its time limit"
        longer = f" --time-min {2 * time_min}" if time_min else " --time-min N"
        return state, f"{word}: hit {limit} (after any requeues); {retry}{longer}"
    if word == "NODE_FAIL":
        return state, f"NODE_FAIL: node {node or '?'} failed under it; {retry}"
    if word == "PREEMPTED":
        return state, f"PREEMPTED: a higher-priority job took its GPUs; {retry}"
    if word == "CANCELLED":
        return state, "CANCELLED: by `cancel`/scancel or an administrator; " + retry
    if error_line:
        return state, error_line
    if word == "COMPLETED":
        return state, "the job ended without writing a result; see `logs CELL`"
    return state, f"SLURM state {word}" + (f" ({exit_reason})" if exit_reason else "") + "; see `logs CELL`"


def log_of(log_err: Optional[str]) -> str:
    """The end of rank 0's stderr (submitit writes the traceback there), or ""."""
    return read_tail(log_err) if log_err and Path(log_err).exists() else ""
