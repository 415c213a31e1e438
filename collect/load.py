"""Every result file of a results dir, and every planned cell, as one KindCell each, of any kind.

collect reads JSON only: the result files, the plan's cell list (plan.json) and the
submission record (registry.jsonl, read by results_format.registry). A planned cell with no
result is pending when the registry has a submission for it (submitted, not ended; queued, never started
for a local one its queue never reached), failed (or
timed out, cancelled) when spent.json records that submission's job as ended, skipped when the
local executor did not start it (this machine cannot run it), else not submitted
(results_format.states.CellState's words). Each kind's package in collect turns its cells into
its tables (collect.kinds); nothing here knows a kind.
"""
from __future__ import annotations

import json
import sys
import warnings
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from collect.kinds import registry as kinds_registry
from collect.cells import ENV_KEYS, ENVELOPE_COLUMNS, KindCell, Loaded
from collect.spent_json import read_spent
from jobs.core.cell import kind_of
from jobs.core.kinds import cell_from_dict
from jobs.core.layout import PLAN_FILE, result_files, unreadable_dir
from results_format.plan_file import cell_dicts, stored_ids
from jobs.core.regular_file import PLAN_MAX, NotRegular, TooLarge, read_regular
from jobs.core.result import NotRegularFile, Result, ResultError, read_result
from results_format import registry
from results_format.states import ENDED_WORDS, SLURM_STATES, CellState
from results_format.text import last_line, visible

@dataclass(frozen=True)
class PlannedCells:
    """plan.json's study name, cells (field dicts) and their ids where the plan stores them (None:
    a plan written before tables, or no plan)."""

    study: Optional[str] = None
    cells: list[dict[str, Any]] = field(default_factory=list)
    ids: Optional[frozenset[str]] = None
    exists: bool = False
    data_dir: Optional[str] = None  # where the jobs read their data (the hand-in's command per cell)


def read_plan_cells(results_dir: Path) -> PlannedCells:
    """The study's name and its cells, from plan.json; none if absent."""
    path = Path(results_dir) / PLAN_FILE
    if not path.exists():
        return PlannedCells()
    try:
        data = json.loads(read_regular(path, "plan file", PLAN_MAX))
        if not isinstance(data, dict):
            raise ValueError("not a plan: no list of cells")
        cells = cell_dicts(data.get("cells", []))
        ids = frozenset(stored_ids(data["cells"])) if isinstance(data.get("cells"), dict) else None
    except (NotRegular, TooLarge) as exc:
        raise ResultError(f"{exc}; run `python -m orchestrator plan` again") from exc
    except (OSError, ValueError, TypeError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else exc
        raise ResultError(f"plan file {path} is unreadable ({why}); run `python -m orchestrator plan` again") from exc
    data_dir = data.get("data_dir")
    return PlannedCells(data.get("study"), cells, ids, exists=True, data_dir=data_dir if isinstance(data_dir, str) else None)


def registry_states(results_dir: Path, spent: Optional[pd.DataFrame] = None) -> dict[str, CellState]:
    """PENDING for each cell with a submission in registry.jsonl (QUEUED for a local one its queue never
    started: no job id), SKIPPED for one the local
    executor did not start since (this machine cannot run it), and where `spent` (collect.spent_json:
    what the jobs held, measured from the scheduler or the local processes) records the cell's
    latest job as ended, the state its word gives (ended_state): that job ended without a result.
    Corrupt lines are passed over (`status` is the verb that reports them)."""
    state = registry.load(results_dir)
    # a local submission with no job id never started: its queue had not reached it (TA4 16: not "pending")
    states = {c: CellState.QUEUED if s.executor == "local" and s.job_id is None else CellState.PENDING
              for c, s in state.latest.items()}
    if spent is not None and len(spent):
        ended = {(c.cell_id, c.job_id): ended_state(c.state) for c in spent.itertuples(index=False) if not c.live}
        for cell_id, sub in state.latest.items():
            word = ended.get((cell_id, sub.job_id)) if sub.job_id else None
            if word is not None:
                states[cell_id] = word
    return states | dict.fromkeys(state.skipped, CellState.SKIPPED)


def ended_state(word: str) -> Optional[CellState]:
    """The state of a cell whose job ended without a result, by the job's word: the local executor's
    ENDED (its process is gone) is FAILED, SLURM's ended words theirs (TIMEOUT, CANCELLED, else
    FAILED); None for a live word or none (the scheduler knew nothing of the job)."""
    if word == "ENDED":
        return CellState.FAILED
    return SLURM_STATES[word] if word in ENDED_WORDS else None


def envelope_row(result: Result) -> dict[str, Any]:
    """What every kind's result has (ENVELOPE_COLUMNS): kind, id, status, the error's last line,
    the environment."""
    env = result.env
    row = dict(
        kind=kind_of(result.cell), cell_id=result.cell_id, status=result.status,
        error=visible(last_line(result.error)) or None,  # tables, CSV and JSON take it as it is shown
        gpu_model=env.get("gpu_model"), hosts=",".join(env.get("hostnames") or []) or env.get("hostname"),
        started_at=env.get("started_at"), ended_at=env.get("ended_at"),
    )
    row.update({f"env_{k}": env.get(k) for k in ENV_KEYS if k != "gpu_model"})
    return row


def load(results_dir: Path, spent: Optional[dict] = None, unplanned: bool = False) -> Loaded:
    """Every cell of the plan and every result file, each file read once and kept as its kind
    keeps it (collect.kinds). A corrupt result file raises ResultError naming it (never a silent
    skip). `spent`: spent.json's content measured just now (collect.spent_json); None: the results
    dir's spent.json. A result of a cell the plan does not hold (copied in, or another study's) is
    left out and named in a SkippedFile warning, unless `unplanned`."""
    kinds = kinds_registry()  # each kind's keep and environment
    results_dir = Path(results_dir)
    if why := unreadable_dir(results_dir):
        raise ResultError(why)
    plan = read_plan_cells(results_dir)
    planned = plan.cells
    contents = [_content(fields) for fields in planned]  # once: 100,000 of them
    planned_content = set(contents) if plan.exists and not unplanned else set()
    cells: dict[str, KindCell] = {}
    envelopes = Envelopes()
    found = set()  # a planned cell found by its fields needs no id
    foreign: list[str] = []
    ids = plan.ids  # a plan written before tables stores none: worked out once, where needed
    for result in read_results(result_files(results_dir), plan.ids):
        kind = kinds.get(kind_of(result.cell))
        fields = compact(result.cell)
        if planned_content and _content(fields) not in planned_content:  # by its id, then (a field added since)
            ids = ids if ids is not None else frozenset(cell_from_dict(f).cell_id for f in planned)
            if result.cell_id not in ids:
                foreign.append(result.cell_id)
                continue
        envelopes.add(envelope_row(result), kind.environment(result) if kind else {})
        found.add(_content(fields))
        cells[result.cell_id] = KindCell(kind_of(fields), result.cell_id, fields, result.status,
                                         kind.keep(result) if kind else result)
    if foreign:
        warnings.warn(f"{len(foreign)} result file(s) of cells the plan does not hold ({foreign[0]}.json"
                      f"{' and more' if len(foreign) > 1 else ''}) left out of the answers; `collect --unplanned` "
                      "takes them in, or move them aside", SkippedFile, stacklevel=2)
    spent_runs = read_spent(results_dir, spent)
    registered = registry_states(results_dir, spent_runs)
    for fields, content in zip(planned, contents, strict=True):
        if content in found:
            continue
        cell = cell_from_dict(fields)  # its checks and its id: the slow part, for cells without a result
        cell_id = cell.cell_id  # a hash of its fields: once
        if cell_id not in cells:  # a result written before a field was added has the same id
            status = registered.get(cell_id, CellState.NOT_SUBMITTED)
            cells[cell_id] = KindCell(cell.kind, cell_id, cell.to_dict(), status)
            envelopes.add(dict(kind=cell.kind, cell_id=cell_id, status=status), {})
    return Loaded(plan.study, tuple(cells.values()), spent_runs, envelopes.frame(), results_dir)


class Envelopes:
    """The envelope of every cell, as rows of ENVELOPE_COLUMNS (tuples, not dicts: 100,000 of them)
    and the entries its kind adds (by column, sparse), gathered as the files are read."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []
        self.extra: dict[str, dict[int, Any]] = {}

    def add(self, envelope: dict[str, Any], environment: Mapping[str, Any]) -> None:
        for key, value in environment.items():
            self.extra.setdefault(key, {})[len(self.rows)] = value
        self.rows.append(tuple(envelope.get(c) for c in ENVELOPE_COLUMNS))

    def frame(self) -> pd.DataFrame:
        frame = pd.DataFrame.from_records(self.rows, columns=ENVELOPE_COLUMNS)
        for key, values in self.extra.items():
            frame[key] = pd.Series(values, index=list(values), dtype=object).reindex(frame.index)
        return frame


def compact(cell: dict[str, Any]) -> dict[str, Any]:
    """A result's cell fields with its names and its words held once for every result (sys.intern):
    a study of 100,000 results holds 100,000 of these."""
    return {sys.intern(k): interned(v) for k, v in cell.items()}


def interned(value: Any) -> Any:
    """A text held once however many results repeat it (a GPU's name, a version, a word of a
    field); any other value as it is."""
    return sys.intern(value) if type(value) is str else value  # noqa: E721 (a StrEnum is held once already)


def _content(fields: dict[str, Any]) -> str:
    return json.dumps(fields, sort_keys=True, default=str)


class SkippedFile(UserWarning):
    """A file named like a result that is no regular file (a FIFO): not read; the message names it."""


NAMED_FILES = 5  # an error about many unreadable files names this many, and counts the rest


def read_results(paths: list[Path], planned_ids: Optional[frozenset[str]] = None) -> Iterator[Result]:
    """Each result file in turn (one at a time: the caller keeps what it needs of each); one that
    is no regular file is skipped with a SkippedFile warning (never opened: a FIFO would block).
    Corrupt ones are read past, and after the last file one ResultError names them all (the
    first with why; at most NAMED_FILES, the rest counted): one run shows every file to move aside."""
    bad: list[tuple[Path, ResultError]] = []
    for path in paths:
        try:
            result = read_result(path)
        except NotRegularFile as exc:
            warnings.warn(str(exc), SkippedFile, stacklevel=2)
            continue
        except ResultError as exc:
            if planned_ids is not None and path.stem not in planned_ids:  # no cell to redo: junk, or another plan's
                exc = ResultError(f"{path} cannot be read as a result ({exc.__cause__ or exc}), and no cell "
                                  "of the plan has that id; move it aside")
            bad.append((path, exc))
            continue
        yield result
    if len(bad) == 1:
        raise bad[0][1]
    if bad:
        raise unreadable_files(bad)


def unreadable_files(bad: list[tuple[Path, ResultError]]) -> ResultError:
    """One error for several unreadable result files: how many, the first's reason, the others named."""
    others = [str(path) for path, _ in bad[1:NAMED_FILES]]
    more = f" (and {len(bad) - NAMED_FILES} more)" if len(bad) > NAMED_FILES else ""
    return ResultError(f"{len(bad)} result files cannot be read. The first: {bad[0][1]}; the others (`collect` on a "
                       f"dir of each says why and what to do): {', '.join(others)}{more}")
