"""How runs shared their machine, as the local executor recorded it (jobs.core.beside): alone, or
beside other cells on other GPUs. A time measured beside neighbours may be slower, so an answer or
a comparison that sets runs of both kinds against each other says so, and a timing table marks the
rows whose runs ran beside others (BESIDE, with its footnote)."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from jobs.core.result import Status

COLUMN = "env_cells_beside"  # collect.load's envelope column: other cells beside the run (None: not recorded)


@dataclass(frozen=True)
class Packing:
    alone: int  # runs that recorded no other cell beside them
    beside: int  # runs that recorded at least one

    @property
    def mixed(self) -> bool:
        return self.alone > 0 and self.beside > 0

    def words(self) -> str:
        """"alone", "beside other cells", both "; "-joined, "-" where no run recorded it."""
        return "; ".join(w for w, n in (("alone", self.alone), ("beside other cells", self.beside)) if n) or "-"


def ran_beside(frame: pd.DataFrame) -> pd.Series:
    """Per run of `frame`, whether it recorded another cell beside it (False where it recorded nothing)."""
    if COLUMN not in frame:
        return pd.Series(False, index=frame.index)
    return pd.to_numeric(frame[COLUMN], errors="coerce").fillna(0) > 0


def packing(frame: pd.DataFrame) -> Packing:
    """Over the runs of `frame` that ran (a result of any status) and recorded what ran beside them."""
    if COLUMN not in frame:
        return Packing(0, 0)
    counts = pd.to_numeric(frame[frame.status.isin(list(Status))][COLUMN], errors="coerce").dropna()
    return Packing(int((counts == 0).sum()), int((counts > 0).sum()))


BESIDE = "†"  # marks a row whose runs shared their machine with other cells (TA5 5)


def beside_mark(row) -> str:
    """" †" where a run of the row ran beside other cells on its machine, else ""."""
    return f" {BESIDE}" if getattr(row, "beside", 0) else ""


def beside_note(table: pd.DataFrame) -> list[str]:
    """The footnote of a timing table that marks rows with BESIDE, where it does."""
    if "beside" not in table or not (table.beside > 0).any():
        return []
    return [f"{BESIDE} = a run of the row ran beside other cells on its machine (the local executor packed them): "
            "a time beside neighbours may be slower than alone (submit --exclusive runs one cell at a time)"]
