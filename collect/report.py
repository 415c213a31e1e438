"""collect: load the results, build every table, write Markdown, CSV and LaTeX; on request the
report (one self-contained HTML file, and Markdown with its PNG plots beside it)."""
from __future__ import annotations

import base64
import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import jinja2
import pandas as pd

from collect.train import grids, tables
from collect import kinds, render
from collect.load import load
from jobs.core.cell import TRAIN
from jobs.core.atomic import write_bytes_atomic
from jobs.core.result import Status
import templates

TABLE_FILES = ("q1", "table1", "strong", "table2", "table3", "test", "q4")
PLOT_OF = {"q1": "q1_epoch_time", "table1": "table1_speedup", "table2": "table2_compute_comm", "q4": "q4_loss_accuracy",
           "q4_test": "q4_test_accuracy"}  # plot key -> its file name
SECTION_PLOTS = {"q1": ("q1",), "table1": ("table1",), "table2": ("table2",), "q4": ("q4", "q4_test")}  # grid -> plots
ENV_ROWS = (("GPU model", "gpu_model"), ("GPUs visible to a job", "env_gpus_visible"), ("driver", "env_driver"),
            ("torch", "env_torch"), ("CUDA", "env_cuda"), ("cuDNN", "env_cudnn"), ("NCCL", "env_nccl"),
            ("Python", "env_python"), ("all-reduce backend", "comm_backend"), ("hosts", "hosts"))


@dataclass(frozen=True)
class Collected:
    results_dir: Path
    study: Optional[str]
    frame: pd.DataFrame  # one row per cell
    epochs: pd.DataFrame  # one row per epoch of each result
    tables: dict[str, pd.DataFrame]  # by key: q1, table1, strong, table2, table3, test, q4, q4_curves
    grids: tuple[render.Grid, ...]
    written: tuple[Path, ...]
    out_dir: Optional[Path] = None  # where the files go: the results dir unless asked otherwise
    unwritten: str = ""  # why a file could not be written (the tables are still here)
    kind_names: tuple[str, ...] = (TRAIN,)  # the kinds whose tables these are (collect.kinds)
    cells: Optional[pd.DataFrame] = None  # every cell of every kind: status and environment (load.Loaded.cells)

    @property
    def table_files(self) -> tuple[str, ...]:
        """The tables written as CSV, of every kind present."""
        return tuple(key for name in self.kind_names for key in kinds.registry()[name].files)

    @property
    def table1(self) -> pd.DataFrame:
        return self.tables["table1"]

    @property
    def q1(self) -> pd.DataFrame:
        return self.tables["q1"]


def build_tables(frame: pd.DataFrame, epochs: pd.DataFrame) -> dict[str, pd.DataFrame]:
    scaling = tables.scaling_table(frame)  # shared by four tables
    return {
        "q1": tables.q1_table(frame), "table1": tables.table1(frame, scaling),
        "strong": tables.strong_scaling(frame, scaling), "table2": tables.table2(frame, scaling),
        "table3": tables.table3(frame, scaling), "test": tables.accuracy_table(frame, epochs),
        "q4": tables.q4_table(frame, epochs),
        "q4_curves": tables.q4_curves(frame, epochs),
    }


def build_grids(frame: pd.DataFrame, built: dict[str, pd.DataFrame]) -> tuple[render.Grid, ...]:
    protocol = tables.timing_protocol(frame)
    return (
        grids.q1_grid(built["q1"], protocol),
        grids.table1_grid(built["table1"], protocol),
        grids.strong_grid(built["strong"], protocol),
        grids.table2_grid(built["table2"], protocol),
        grids.table3_grid(built["table3"], protocol),
        grids.accuracy_grid(built["test"]),
        grids.q4_grid(built["q4"], tables.largest_fitting_batch(built["q1"])),
    )


def collect(results_dir: Path, out_dir: Optional[Path] = None) -> Collected:
    """Every table from the results dir; writes tables.md, tables.tex and one CSV per table in
    `out_dir` (default: the results dir). A file that cannot be written is said in `unwritten`."""
    results_dir = Path(results_dir)
    out = Path(out_dir) if out_dir else results_dir
    loaded = load(results_dir)
    present = kinds.present(loaded)  # each kind present builds its own tables
    built = {key: table for kind in present for key, table in kind.tables(loaded).items()}
    grid_list = tuple(grid for kind in present for grid in kind.grids(loaded, built))
    csv = [key for kind in present for key in kind.files]
    files = {
        "tables.md": "".join(render.to_markdown(g) + "\n" for g in grid_list),
        "tables.tex": render.LATEX_PREAMBLE + "\n".join(render.to_latex(g) for g in grid_list),
        **{f"{key}.csv": built[key].to_csv(index=False) for key in csv},
    }
    written, unwritten = write_files(out, files)
    return Collected(results_dir, loaded.study, loaded.frame, loaded.epochs, built, grid_list, written, out, unwritten,
                     tuple(kind.name for kind in present), loaded.cells)


def write_files(out: Path, files: dict[str, str | bytes]) -> tuple[tuple[Path, ...], str]:
    """Each file whole, in order, until one cannot be written: (those written, why not or "")."""
    written: list[Path] = []
    for name, data in files.items():
        path = out / name
        try:
            written.append(write_bytes_atomic(path, data.encode() if isinstance(data, str) else data))
        except OSError as exc:
            return tuple(written), f"cannot write {path} ({exc.strerror}); pass --out DIR to write them elsewhere"
    return tuple(written), ""


def environment(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """What the runs ran on: each field's distinct values over the result files, with counts
    where they differ, and the span of the runs."""
    ran = frame[frame.status.isin(list(Status))]
    rows = []
    for name, column in ENV_ROWS:
        counts = ran[column].dropna().map(_plain).value_counts()
        if len(counts) <= 1:
            rows.append((name, counts.index[0] if len(counts) else "-"))
        else:
            rows.append((name, "; ".join(f"{v} ({n} runs)" for v, n in counts.items())))
    started, ended = ran.started_at.dropna(), ran.ended_at.dropna()
    rows.append(("runs", f"{started.min()} to {ended.max()}" if len(started) and len(ended) else "-"))
    return rows


def _plain(value) -> str:
    """4.0 -> "4" (a column of ints with gaps reads back as floats)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def status_counts(frame: pd.DataFrame) -> str:
    counts = frame.status.value_counts()
    order = [s for s in tables.STATUS_RANK if s in counts]
    return ", ".join(f"{counts[s]} {s}" for s in order) or "no cells"


def make_plots(built: dict[str, pd.DataFrame]) -> dict[str, Optional[bytes]]:
    from collect.train import plots  # matplotlib: only for the report

    return {
        "q1": plots.epoch_time(built["q1"]), "table1": plots.speedup(built["table1"]),
        "table2": plots.compute_comm(built["table2"]), "q4": plots.q4_curves(built["q4_curves"]),
        "q4_test": plots.q4_test_accuracy(built["q4_curves"]),
    }


def template_env(autoescape: bool) -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates.TEMPLATES_DIR)),
                              undefined=jinja2.StrictUndefined, autoescape=autoescape, keep_trailing_newline=True,
                              trim_blocks=True, lstrip_blocks=True)


def write_report(collected: Collected) -> tuple[tuple[Path, ...], str]:
    """report.html (self-contained: plots inline as base64 PNG), report.md and plots/*.png beside
    it, in the collected out dir. Returns the files written and why one could not be (or "")."""
    out = collected.out_dir or collected.results_dir
    present = [kinds.registry()[name] for name in collected.kind_names]
    pngs = {key: png for kind in present for key, png in kind.plots(collected.tables).items() if png}
    names = {key: name for kind in present for key, name in kind.plot_files.items()}
    files = {key: f"plots/{names[key]}.png" for key in pngs}
    every = collected.frame if collected.cells is None else collected.cells
    context = dict(
        study=collected.study or collected.results_dir.name, results_dir=str(collected.results_dir.absolute()),
        kind_title=" and ".join(k.study for k in present), subject="; ".join(k.subject for k in present),
        generated_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        cells=status_counts(every), environment=environment(every),
        sections=[dict(grid=g, plot_keys=[k for k in SECTION_PLOTS.get(g.key, (g.key,)) if k in files])
                  for g in collected.grids],
        status_words=sorted(set(render.STATUS_TEXT.values())),
    )
    images = {key: base64.b64encode(pngs[key]).decode("ascii") for key in files}
    html = template_env(True).get_template("report.html.j2").render(context, images=images)
    markdown = template_env(False).get_template("report.md.j2").render(
        context, plot_files=files, markdown={g.key: render.to_markdown(g, "##") for g in collected.grids})
    return write_files(out, {"report.html": html, "report.md": markdown, **{files[k]: pngs[k] for k in files}})
