"""What each job of a study held, from spent.json: one row per run of each attempt, failed ones
and retries included (`python -m orchestrator collect` writes it from sacct, the result files
or the local processes; orchestrator.budget.spent says how)."""
from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional

import pandas as pd

from jobs.core.layout import SPENT_FILE
from jobs.core.regular_file import CACHE_MAX, read_regular
from jobs.core.result import ResultError

SPENT_COLUMNS = ["cell_id", "job_id", "gpus", "elapsed_s", "source", "state", "live", "gpu_hours"]
_TYPES = {"cell_id": (str,), "job_id": (str,), "gpus": (int,), "elapsed_s": (int, float, type(None)),
          "source": (str,), "state": (str,), "live": (bool,), "gpu_hours": (int, float)}


def read_spent(results_dir: Path, measured: Optional[dict] = None) -> pd.DataFrame:
    """The runs of `measured` (spent.json's content), else of the results dir's spent.json, as
    SPENT_COLUMNS, with `measured_at` in the frame's attrs; none when there is no such file. An
    unreadable one raises ResultError naming it (its numbers would reach a table)."""
    path = Path(results_dir) / SPENT_FILE
    if measured is None and not path.exists():
        return pd.DataFrame(columns=SPENT_COLUMNS)
    try:
        data = json.loads(read_regular(path, "spent file", CACHE_MAX)) if measured is None else measured
        charges = data["charges"] if isinstance(data, dict) else None
        if not isinstance(charges, list):
            raise ValueError("no list of charges")
        for number, charge in enumerate(charges):
            _check(number, charge)
    except (OSError, ValueError, KeyError, TypeError, RecursionError) as exc:
        raise ResultError(f"{path} is unreadable ({exc}); delete it and run `python -m orchestrator collect` "
                          "again where the jobs ran") from exc
    frame = pd.DataFrame([{k: c[k] for k in SPENT_COLUMNS} for c in charges], columns=SPENT_COLUMNS)
    frame.attrs["measured_at"] = str(data.get("measured_at", ""))
    return frame


def _check(number: int, charge) -> None:
    if not isinstance(charge, dict):
        raise TypeError(f"charge {number} is not an object")
    for name, types in _TYPES.items():
        value = charge.get(name)
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            raise TypeError(f"charge {number}: {name} = {value!r}")
    if charge["gpus"] < 0 or not math.isfinite(charge["gpu_hours"]) or charge["gpu_hours"] < 0:
        raise ValueError(f"charge {number}: gpus and gpu_hours must be >= 0")
