"""How runs shared their machine, as the local executor recorded it (jobs.core.beside): alone, or
beside other cells on other GPUs. A time measured beside neighbours may be slower, so an answer or
a comparison that sets runs of both kinds against each other says so, and a timing table marks the
rows whose runs ran beside others (BESIDE, with its footnote)."""
from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from jobs.core.result import Status

COLUMN = "env_cells_beside"  # collect.load's envelope column: other cells beside the run (None: not recorded)
GPUS = "env_gpus_visible"  # the GPUs a run saw: the most any run saw is at least the machine's


@dataclass(frozen=True)
class Packing:
    alone: int  # runs that recorded no other cell beside them
    beside: int  # runs that recorded at least one
    ran: int = 0  # runs with a result of any status, whether they recorded it or not
    cells: int = 0  # the cells counted over, with a result or not
    gpus: int = 0  # the most GPUs one run saw on its machine

    @property
    def mixed(self) -> bool:
        return self.alone > 0 and self.beside > 0

    @property
    def all_alone(self) -> bool:
        """Every run recorded that it ran alone, on a machine of several GPUs where the local executor would
        have packed cells beside it: the set ran one cell at a time (submit --exclusive: TA8 14)."""
        return self.ran > 0 and self.alone == self.ran and self.gpus > 1

    def alone_said(self) -> str:
        """The hand-in's header line where all_alone, else ""."""
        if not self.all_alone:
            return ""
        some = " with a result" if self.ran < self.cells else ""
        return (f"All {self.ran:,} cells{some} ran alone on their machine ({self.gpus} GPUs): no timing ran "
                "beside another cell (submit --exclusive).")

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
    ran = frame[frame.status.isin(list(Status))]
    counts = pd.to_numeric(ran[COLUMN], errors="coerce").dropna()
    seen = pd.to_numeric(ran[GPUS], errors="coerce") if GPUS in ran else pd.Series(dtype=float)
    gpus = seen[seen.between(0, 1e6)].max()  # a hostile file's inf or NaN says nothing
    return Packing(int((counts == 0).sum()), int((counts > 0).sum()), len(ran), len(frame),
                   int(gpus) if pd.notna(gpus) else 0)


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
