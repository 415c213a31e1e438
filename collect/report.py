"""collect: load the results, build every table, write Markdown, CSV and LaTeX; on request the
report (one self-contained HTML file, and Markdown with its PNG plots beside it)."""
from __future__ import annotations

import base64
import json
import stat
import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import jinja2
import pandas as pd

from collect import kinds, render
from collect.questions import Answered, answer_all
from collect.references import cited
from collect.load import load
from collect.packing import packing
from collect.produced import NO_RESULT, Produced, how_run, produced, produced_markdown
from collect.cells import ENVELOPE_COLUMNS, Loaded
from collect.view import DEFAULT_VIEW, View
from jobs.core.atomic import write_bytes_atomic
from jobs.core.layout import SPENT_FILE
from jobs.core.result import Status
from results_format.text import visible
import templates

KEPT_OUT = "_values"  # a table's per-repeat values (tuples, for the verdicts): not in its CSV file nor --json


def as_written(table: pd.DataFrame) -> pd.DataFrame:
    """A table as its CSV file and `collect --json` give it: without its per-repeat value columns."""
    return table.drop(columns=[c for c in table.columns if str(c).endswith(KEPT_OUT)])


ENV_ROWS = (("GPU model", "gpu_model"), ("GPUs visible to a job", "env_gpus_visible"), ("driver", "env_driver"),
            ("torch", "env_torch"), ("CUDA", "env_cuda"), ("cuDNN", "env_cudnn"), ("NCCL", "env_nccl"),
            ("Python", "env_python"), ("all-reduce backend", "backend"), ("hosts", "hosts"))


@dataclass(frozen=True)
class Collected:
    results_dir: Path
    study: Optional[str]
    cells: pd.DataFrame  # every cell of every kind: status and environment (envelopes)
    tables: dict[str, pd.DataFrame]  # by key, of every kind present
    grids: tuple[render.Grid, ...]
    written: tuple[Path, ...]
    kind_names: tuple[str, ...]  # the kinds whose tables these are (collect.kinds)
    out_dir: Optional[Path] = None  # where the files go: the results dir unless asked otherwise
    unwritten: str = ""  # why a file could not be written (the tables are still here)
    answers: tuple[Answered, ...] = ()  # each kind's questions answered, in their declared order (collect.questions)
    plots: dict[str, tuple[str, bytes]] = field(default_factory=dict)  # drawn for answers.md: key -> (path, PNG)

    @property
    def table_files(self) -> tuple[str, ...]:
        """The tables written as CSV, of every kind present."""
        return tuple(key for name in self.kind_names for key in kinds.registry()[name].files)


def collect(results_dir: Path, out_dir: Optional[Path] = None, spent: Optional[dict] = None,
            view: View = DEFAULT_VIEW, unplanned: bool = False) -> Collected:
    """Every table from the results dir; writes tables.md, tables.tex and one CSV per table in
    `out_dir` (default: the results dir). A file that cannot be written is said in `unwritten`.
    `spent`: what the jobs held, measured just now (collect.spent_json), written as spent.json too;
    None: the results dir's spent.json, if any. `view`: the rows the grids show (the CSVs have all).
    `unplanned`: take in the results of cells the plan does not hold (collect.load)."""
    results_dir = Path(results_dir)
    out = Path(out_dir) if out_dir else results_dir
    loaded = load(results_dir, spent, unplanned)
    present = kinds.present(loaded)  # each kind present builds its own tables
    built = {key: table for kind in present for key, table in kind.tables(loaded, view).items()}
    grid_list = tuple(grid for kind in present for grid in kind.grids(built, view))
    answers = tuple(a for kind in present for a in answer_all(kind.questions, built))
    csv = [key for kind in present for key in kind.files]
    pngs = drawn(present, built) if answers else {}  # answers.md links them, whichever verb wrote it (TA3 29)
    made = produced(results_dir, tuple(kind.name for kind in present), marks(loaded.envelopes),
                    packing(loaded.envelopes).all_alone)
    files: dict[str, str | bytes] = {
        "tables.md": "".join(render.to_markdown(g) + "\n" for g in grid_list),
        "tables.tex": render.LATEX_PREAMBLE + "\n".join(render.to_latex(g) for g in grid_list),
        **({"answers.md": render.answers_markdown(f"Answers: {loaded.study or results_dir.name}", answers, grid_list,
                                                  paths(by_grid(present, grid_list, pngs), pngs),
                                                  hand_in_status(loaded.envelopes, made))
            + how_produced(made)} if answers else {}),
        **{f"{key}.csv": as_written(built[key]).to_csv(index=False) for key in csv},
        **({SPENT_FILE: json.dumps(spent, indent=1, sort_keys=True)} if spent is not None else {}),
        **(made.cell_files if answers else {}),  # the hand-in's cells and their commands (collect.produced)
        **{path: png for path, png in pngs.values()},
    }
    written, unwritten = write_files(out, files)
    return Collected(results_dir, loaded.study, envelopes(loaded), built, grid_list, written,
                     tuple(kind.name for kind in present), out, unwritten, answers, pngs)


def drawn(present, built: dict[str, pd.DataFrame]) -> dict[str, tuple[str, bytes]]:
    """Every plot of the kinds present: plot key -> (its path under the out dir, its PNG)."""
    out = {}
    for kind in present:
        for key, png in kind.plots(built).items():
            if png:
                out[key] = (f"plots/{kind.plot_files[key]}.png", png)
    return out


def by_grid(present, grids, pngs: dict[str, tuple[str, bytes]]) -> dict[str, list[str]]:
    """Grid key -> the keys of the drawn plots it shows (a kind's sections, else the plot of its own key)."""
    sections = {key: plots for kind in present for key, plots in kind.sections.items()}
    return {g.key: [k for k in sections.get(g.key, (g.key,)) if k in pngs] for g in grids}


def paths(shows: dict[str, list[str]], pngs: dict[str, tuple[str, bytes]]) -> dict[str, list[str]]:
    """Grid key -> the paths of its plots (answers.md's images)."""
    return {key: [pngs[k][0] for k in plots] for key, plots in shows.items()}


def how_produced(made: Produced) -> str:
    """answers.md's last section: the study file, the commands and the job code (collect.produced)."""
    return "\n\n" + "\n".join(produced_markdown(made))


def envelopes(loaded: Loaded) -> pd.DataFrame:
    """One row per cell of every kind: kind, id, status, error, environment (ENVELOPE_COLUMNS, and
    what its kind adds for ENV_ROWS: KindTables.environment), as collect.load gathered them."""
    columns = ENVELOPE_COLUMNS + [column for _, column in ENV_ROWS if column not in ENVELOPE_COLUMNS]
    return loaded.envelopes.reindex(columns=columns)


def write_files(out: Path, files: dict[str, str | bytes]) -> tuple[tuple[Path, ...], str]:
    """Each file whole, in order, until one cannot be written: (those written, why not or "")."""
    written: list[Path] = []
    for name, data in files.items():
        path = out / name
        if link := link_on_the_way(out, name):  # another user's link would have us write where it points
            return tuple(written), f"{link} is a symbolic link: nothing is written through one; remove it"
        try:
            # a lone surrogate (a file name that was not UTF-8, in an error) as its escape, as visible shows it
            raw = data.encode(errors="backslashreplace") if isinstance(data, str) else data
            written.append(path if holds(path, raw) else write_bytes_atomic(path, raw))
        except OSError as exc:
            return tuple(written), f"cannot write {path} ({exc.strerror}); write them in a dir you can write: --out DIR"
    return tuple(written), ""


def holds(path: Path, data: bytes) -> bool:
    """`path` is a regular file of exactly `data` (read only then: a FIFO or a link is never opened), so a
    collect run again skips the two fsyncs of rewriting it: 100,000 cells' files on /scratch."""
    try:
        st = path.lstat()
        return stat.S_ISREG(st.st_mode) and st.st_size == len(data) and path.read_bytes() == data
    except OSError:
        return False


def link_on_the_way(out: Path, name: str) -> Optional[Path]:
    """The first dir between `out` and the file `name` under it ("plots" of "plots/q1.png") that is a
    symbolic link, else None."""
    path = out
    for part in Path(name).parts[:-1]:
        path = path / part
        if path.is_symlink():
            return path
    return None


def environment(frame: pd.DataFrame) -> list[tuple[str, str]]:
    """What the runs ran on: each field's distinct values over the result files, with counts
    where they differ, and the span of the runs."""
    ran = ran_on(frame[frame.status.isin(list(Status))])
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


CPU_RUN = "not used (CPU run)"


def ran_on(ran: pd.DataFrame) -> pd.DataFrame:
    """The runs with the CUDA and cuDNN a run used: none on the CPU, where torch still reports the
    CUDA version it was built for (not the run's)."""
    cpu = (ran.env_device == "cpu") | (ran.gpu_model == "cpu")
    return ran.assign(env_cuda=ran.env_cuda.where(~cpu, CPU_RUN), env_cudnn=ran.env_cudnn.where(~cpu, CPU_RUN))


def _plain(value) -> str:
    """4.0 -> "4" (a column of ints with gaps reads back as floats)."""
    return str(int(value)) if isinstance(value, float) and value.is_integer() else str(value)


def hand_in_status(frame: pd.DataFrame, made: Produced) -> str:
    """answers.md's line on how complete the set is (TA3 15): "All 12 planned cells have a result (12 ok)."; else
    "Provisional: 37 of 72 planned cells have a result (35 ok, 1 oom, 1 failed); 35 have none (35 pending). ...";
    with the cells that ended with no answer named (ended_named), and that all ran alone where they did
    (collect.packing.Packing.alone_said)."""
    has = frame.status.isin(list(Status))
    ended = " ".join(filter(None, (ended_named(frame, made), packing(frame).alone_said())))
    if has.all():
        return " ".join(filter(None, (f"All {len(frame):,} planned cells have a result ({status_counts(frame)}).", ended)))
    counts = (f"Provisional: {int(has.sum()):,} of {len(frame):,} planned cells have a result "
              f"({status_counts(frame[has]) if has.any() else 'none'}); {int((~has).sum()):,} have none "
              f"({status_counts(frame[~has])}).")
    return " ".join(filter(None, (counts, ended, "The plan holds the study file's cells and any repeats queued later "
                                  "to settle a comparison; a figure marked \"(1 run; 2 more planned, no result)\" is one "
                                  "whose other planned runs have no result.")))


ENDED_NAMED = 5  # such cells named in the hand-in's header; the rest counted (their commands are marked)
WHY_SHOWN = 120  # characters of a failed result's error quoted beside its cell


def ended_named(frame: pd.DataFrame, made: Produced) -> str:
    """Each cell that ended with no answer, by its file under cells/ and why, so a reader finds it (TA7 15):
    "Ended with no answer: cells/NAME.json (failed: its job ended and wrote no result file); ..."; "" where none did."""
    ended = frame[frame.status.isin(render.ENDED)]
    if ended.empty:
        return ""
    files = {c.cell_id: c.file for c in made.cells}
    named = [f"{files.get(str(c), str(c))} ({render.status_text(s)}: {why_ended(e)})"
             for c, s, e in zip(ended.cell_id[:ENDED_NAMED], ended.status, ended.error, strict=False)]
    more = f" and {len(ended) - ENDED_NAMED:,} more" if len(ended) > ENDED_NAMED else ""
    return (f"Ended with no answer: {'; '.join(named)}{more}; their commands are marked under How this was "
            "produced.")


def why_ended(error) -> str:
    """A failed cell's error as its result gives it (its last line), or that its job left no result file."""
    if not isinstance(error, str) or not error:
        return "its job ended and wrote no result file"
    return error if len(error) <= WHY_SHOWN else error[:WHY_SHOWN] + "..."


def marks(frame: pd.DataFrame) -> dict[str, str]:
    """Cell id -> its command's mark, for each cell with no answer: "no result: pending" where it never ran or has
    not yet (TA5 16), its status where it ended with none ("failed", TA7 15)."""
    out = {}
    for c, s in zip(frame.cell_id, frame.status, strict=True):
        if s in render.ENDED:
            out[str(c)] = render.status_text(s)
        elif s not in list(Status):
            out[str(c)] = f"{NO_RESULT}: {render.status_text(s)}"
    return out


def status_counts(frame: pd.DataFrame) -> str:
    counts = frame.status.value_counts()
    order = [s for s in render.STATUS_RANK if s in counts]
    return ", ".join(f"{counts[s]} {render.status_text(s)}" for s in order) or "no cells"


WIDE_COLUMNS = 12  # a table of more columns is set in the report's smaller type (report.html.j2's table.wide)


def template_env(autoescape: bool) -> jinja2.Environment:
    """HTML escapes every value (autoescape); Markdown's template escapes each with `md`, or `code`
    for a code span (collect.render.md_text, md_code)."""
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates.TEMPLATES_DIR)),
                             undefined=jinja2.StrictUndefined, autoescape=autoescape, keep_trailing_newline=True,
                             trim_blocks=True, lstrip_blocks=True,
                             finalize=lambda value: visible(value) if type(value) is str else value)
    env.filters.update(md=lambda value: render.md_text(str(value)), code=lambda value: render.md_code(str(value)),
                       table_name=render.table_name, fence=render.md_fence,
                       cite=render.cited_html if autoescape else render.cited_markdown)
    env.globals.update(no_code=render.NO_CODE, WIDE_COLUMNS=WIDE_COLUMNS,
                       references_markdown=lambda refs: "\n".join(render.references_markdown(refs)))
    return env


def answer_sections(collected: Collected, plots: dict[str, list[str]]) -> dict[str, Any]:
    """The report's parts: each answer with its tables (and their plots), the code it hands in (a record
    with `code`: collect.render.Listing) and its details; the tables no answer shows (`others`); the
    references the answers cite (collect.references)."""
    grids = {g.key: g for g in collected.grids}
    answers: list[dict] = []
    shown: set[str] = set()
    for a in collected.answers:
        keys = [k for k in a.question.tables if k in grids and k not in shown]
        shown.update(keys)
        answers.append(dict(id=a.id, anchor=a.id.lower().replace(".", "-"), title=a.question.title, text=a.text,
                            evidence=render.evidence_text(a, collected.grids), details=list(a.details),
                            sections=[dict(grid=grids[k], plot_keys=plots[k]) for k in keys],
                            hands_in_code=hasattr(a.record, "code"), code=list(getattr(a.record, "code", ())),
                            code_markdown="\n".join(render.code_markdown(a.record))))
    # with answers, an empty table no answer shows is another part's (the lab's hand-in: Part A's tables)
    others = [dict(grid=g, plot_keys=plots[g.key]) for g in collected.grids
              if g.key not in shown and not (answers and g.empty)]
    references = cited(text for a in collected.answers for text in (a.text, *a.details))
    return dict(answers=answers, others=others, references=references)


def write_report(collected: Collected) -> tuple[tuple[Path, ...], str]:
    """report.html (self-contained: plots inline as base64 PNG), report.md and plots/*.png beside
    it, in the collected out dir (answers.md is collect's, the same whichever verb ran). Returns the
    files written and why one could not be (or "")."""
    out = collected.out_dir or collected.results_dir
    present = [kinds.registry()[name] for name in collected.kind_names]
    drawn_plots = collected.plots or drawn(present, collected.tables)
    pngs = {key: png for key, (_, png) in drawn_plots.items()}
    files = {key: path for key, (path, _) in drawn_plots.items()}
    shows = by_grid(present, collected.grids, drawn_plots)
    every = collected.cells
    made = produced(collected.results_dir, collected.kind_names, marks(collected.cells), packing(every).all_alone)
    context = dict(
        study=collected.study or collected.results_dir.name, results_dir=str(collected.results_dir.absolute()),
        kind_title=" and ".join(k.study for k in present), subject="; ".join(k.subject for k in present),
        generated_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        cells=". ".join(filter(None, (status_counts(every), ended_named(every, made).rstrip("."),
                                      packing(every).alone_said().rstrip(".")))),
        environment=environment(every),
        status_words=sorted(set(render.STATUS_TEXT.values())),
        produced=made, how_run=how_run(made),
        produced_markdown="\n".join(produced_markdown(made)),
        **answer_sections(collected, shows),
    )
    images = {key: base64.b64encode(pngs[key]).decode("ascii") for key in files}
    html = template_env(True).get_template("report.html.j2").render(context, images=images)
    markdown = template_env(False).get_template("report.md.j2").render(
        context, plot_files=files, markdown={g.key: render.to_markdown(g, "###") for g in collected.grids})
    return write_files(out, {"report.html": html, "report.md": markdown, **{files[k]: pngs[k] for k in files}})
