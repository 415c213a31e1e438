"""collect: load the results, build the tables, write them as Markdown and CSV."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from collect import render, tables
from collect.load import load_frame


@dataclass(frozen=True)
class Collected:
    frame: pd.DataFrame
    table1: pd.DataFrame
    q1: pd.DataFrame
    grids: tuple[render.Grid, ...]
    written: tuple[Path, ...]


def caption(frame: pd.DataFrame, table: pd.DataFrame) -> str:
    gpus = sorted({str(g) for g in frame.gpu_model.dropna()}) or ["unknown (no result yet)"]
    repeats = sorted({int(r) for r in table.get("repeats", pd.Series([], dtype=int)) if r}) or [0]
    return (f"Seconds for the 2nd of 2 epochs; GPU: {', '.join(gpus)}; "
            f"repeats per cell: {'/'.join(map(str, repeats))} (median)")


def collect(results_dir: Path) -> Collected:
    results_dir = Path(results_dir)
    frame = load_frame(results_dir)
    t1, q1 = tables.table1(frame), tables.q1_table(frame)
    grids = (
        render.table1_grid(t1, caption(frame, t1) + "; speedup = T1/TN, batch per GPU fixed"),
        render.q1_grid(q1, caption(frame, q1) + "; train time excludes waiting on data"),
    )
    written = (
        _write(results_dir / "tables.md", "".join(render.to_markdown(g) + "\n" for g in grids)),
        _write(results_dir / "table1.csv", t1.to_csv(index=False)),
        _write(results_dir / "q1.csv", q1.to_csv(index=False)),
    )
    return Collected(frame, t1, q1, grids, written)


def _write(path: Path, text: str) -> Path:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(path)
    return path
