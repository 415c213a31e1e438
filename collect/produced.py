"""How a hand-in was produced (the assignment asks for the script and the commands): the study file
the plan was made from, the commands that plan, submit and collect it, and where each kind's job
code lives. Printed as the report's and answers.md's last section."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import json
import re
import shlex
from collections import Counter

import jobs
from collect.load import read_plan_cells
from collect.render import md_code, md_fence, md_text
from jobs.core.cell import CellError
from jobs.core.result import ResultError
from jobs.core.cell import kind_of
from jobs.core.kinds import PACKAGES, cell_from_dict, kind_named
from results_format import registry
from results_format.errors import RegistryError
from jobs.core.layout import STUDY_FILE
from jobs.core.synthetic import data_said

TOOL_ROOT = Path(jobs.__file__).parent.parent  # the checkout (or install) `python -m jobs` runs from
STUDY_LIMIT = 100_000  # characters of the study file printed: a study file is a page, not a data set
VALUES_SHOWN = 10  # distinct values of one field listed from the plan; more are counted


@dataclass(frozen=True)
class CellRun:
    """One planned cell as the hand-in runs it by hand: its file under cells/ and the command that runs it."""

    name: str  # the file's stem: the cell's label, with its id where another cell shares the label
    cell_json: str  # the cell's fields, as `python -m jobs --cell` reads them
    command: str
    mark: str = ""  # where the cell has no answer (never ran, not yet, or ended without one: TA5 16, TA7 15), why
    cell_id: str = ""

    @property
    def line(self) -> str:
        return f"{self.command}  # {self.mark}" if self.mark else self.command

    @property
    def file(self) -> str:
        return f"{CELLS_DIR}/{self.name}.json"


@dataclass(frozen=True)
class Produced:
    study_file: Optional[str]  # the study file's text as the results dir holds it (None when it holds none)
    commands: tuple[str, ...]  # plan, submit (with the executor that ran the set), collect
    code: tuple[str, ...]  # the job package of each kind that ran (the training script)
    planned: tuple[str, ...] = ()  # where the study file is missing or empty: plan.json's study name, its cell
    # count, and each field's values over the cells (how the set was made)
    executors: tuple[str, ...] = ()  # those the registry records the cells were submitted with (TA3 14)
    scripts: tuple[tuple[str, str], ...] = ()  # (path, text) of each kind's job script (TA3 6)
    cells: tuple[CellRun, ...] = ()  # every planned cell's command (TA3 6)
    data_dir: str = ""  # the plan's: where the cells read their data (the commands' $DATA, to substitute)
    data: str = ""  # the one description of the data the planned cells read (jobs.core.synthetic.data_said)
    exclusive: bool = False  # every cell ran alone on a machine of several GPUs: submit --exclusive (TA8 14)

    @property
    def data_line(self) -> str:
        """Said above the study file (TA4 17, TA7 15): the file is the results dir's as it is, its comments its
        author's (they may tell of another run of it); the data is as said here."""
        printed = (f"The results dir's {STUDY_FILE} as it is: its comments are its author's own words and may tell of "
                   "another run of the file; what ran here are the planned cells, repeats included (the commands "
                   "above)." if self.study_file is not None and self.study_file.strip() else "")
        data = f"The data the cells read: {self.data}, as the answers say it." if self.data else ""
        return " ".join(filter(None, (printed, data)))

    def setup(self) -> list[str]:
        """The lines before the commands (TA4 5): where `python -m jobs` is found, and $DATA, the reader's data dir
        (they must set it: the plan's is the machine's that ran the set, said in a comment)."""
        found = (f"export PYTHONPATH={shlex.quote(str(TOOL_ROOT))}  # the tool's checkout, where the jobs package is"
                 if (TOOL_ROOT / "pyproject.toml").is_file() else "# the jobs package is installed: python -m jobs finds it")
        if not self.data_dir:  # a plan written before it named one: the commands take no --data
            return [found, "# the plan names no data dir: the commands below take none"]
        # the dir the cells read on the machine that ran them is named, never set: it is not the reader's (TA7 15);
        # json.dumps keeps a hostile dir on the comment's one line
        said = (f"# your data dir (a synthetic set is written there when missing); this set's cells read "
                f"{json.dumps(self.data_dir)} where they ran")
        return [found, f'DATA="${{DATA:?set DATA to your data dir}}"  {said}']

    @property
    def cell_commands(self) -> list[str]:
        """The commands the hand-in prints, after their setup: COMMANDS_LISTED cells' at most, then where every
        one is."""
        shown = [c.line for c in self.cells[:COMMANDS_LISTED]]
        more = len(self.cells) - COMMANDS_LISTED
        return self.setup() + shown + ([f"# ... and {more:,} more: {RUN_ALL} holds every one"] if more > 0 else [])

    @property
    def cells_said(self) -> str:
        """What the commands are and where the cells' files are."""
        unran = sum(1 for c in self.cells if c.mark.startswith(NO_RESULT))
        ended = sum(1 for c in self.cells if c.mark and not c.mark.startswith(NO_RESULT))
        marked = "".join([f"; the {unran:,} with no result are marked \"# {NO_RESULT}\"" if unran else "",
                          f"; the {ended:,} that ended with no answer {'is' if ended == 1 else 'are'} marked with its status"
                          if ended else ""])
        return (f"One command per planned cell ({len(self.cells):,}{marked}), run from the dir this hand-in is in: each cell's "
                f"fields are in {CELLS_DIR}/NAME.json beside it, every command in {RUN_ALL}. The first line puts "
                f"the tool's jobs package on Python's path{DATA_SAID if self.data_dir else ''}. A multi-GPU cell run "
                "this way starts its ranks on this machine.")

    @property
    def cell_files(self) -> dict[str, str]:
        """The files written beside the hand-in: each cell's JSON, and every command in one script."""
        if not self.cells:
            return {}
        script = "#!/bin/sh\n# Every cell of the study, one after another (run from the dir holding cells/)\nset -e\n"
        return {**{c.file: c.cell_json for c in self.cells},
                RUN_ALL: script + "".join(line + "\n" for line in self.setup())
                + "".join(c.line + "\n" for c in self.cells)}


CELLS_DIR = "cells"
DATA_SAID = ("; the second takes the data dir from $DATA: set it to yours first (the dir this set read is named in "
             "a comment: it is the machine's that ran it)")
NO_RESULT = "no result"  # a command's mark where its cell never ran or has not yet
RUN_ALL = f"{CELLS_DIR}/run_all.sh"
COMMANDS_LISTED = 100  # cells whose command the hand-in prints; all are in RUN_ALL


def produced(results_dir: Path, kind_names: tuple[str, ...], marks: Optional[dict[str, str]] = None,
             exclusive: bool = False) -> Produced:
    """`marks`: cell id -> its command's mark, for each planned cell with no answer (collect.report.marks).
    `exclusive`: every cell ran alone on a machine of several GPUs (collect.packing.Packing.all_alone): the
    local submit that reproduces it takes --exclusive (TA8 14)."""
    path = Path(results_dir) / STUDY_FILE
    text: Optional[str] = None
    if path.is_file() and not path.is_symlink():  # another user's link could point at a file not theirs
        with open(path, encoding="utf-8", errors="backslashreplace") as f:
            read = f.read(STUDY_LIMIT + 1)
        text = read if len(read) <= STUDY_LIMIT else read[:STUDY_LIMIT] + "\n# ... (cut: over 100,000 characters)"
    results = str(results_dir)
    ran = executors(results_dir)
    alone = " --exclusive" if exclusive else ""
    submit = [f"python -m orchestrator submit --results {results} --executor {e}{alone if e == 'local' else ''}"
              for e in ran] or [
        f"python -m orchestrator submit --results {results}"]
    commands = (plan_command(results, text), *submit, f"python -m orchestrator collect --results {results} --report")
    cells = _plan_cells(results_dir)
    shown = scripts(kind_names, cells)
    printed = {path for path, _ in shown}
    code = tuple(f"{PACKAGES[n].replace('.', '/')}/ (the {n} job: python -m jobs --cell runs it; printed below: "
                 f"{', '.join(p for p in _module_paths(n, cells) if p in printed)})" for n in kind_names if n in PACKAGES)
    return Produced(text, commands, code, () if text and text.strip() else planned(results_dir), ran,
                    shown, cell_runs(results_dir, marks or {}), _plan_data_dir(results_dir), data_said(cells),
                    exclusive)


def plan_command(results: str, study: Optional[str]) -> str:
    """`plan --study` where the results dir holds the study file; else no command that cannot run as printed
    (TA5 12): a comment that plan.json is the plan `submit` reads, summarised under the Study file."""
    if study is not None and study.strip():
        return f"python -m orchestrator plan --study {results}/{STUDY_FILE} --results {results}"
    why = "holds no study file" if study is None else "holds an empty study file"
    return (f"# no plan command: the results dir {why} ({STUDY_FILE}); its plan.json is the plan, which submit reads "
            "as it is (its cells and fields: Study file, below)")


def _plan_cells(results_dir: Path) -> list[dict]:
    try:
        return read_plan_cells(results_dir).cells
    except ResultError:
        return []


def _plan_data_dir(results_dir: Path) -> str:
    try:
        return read_plan_cells(results_dir).data_dir or ""
    except ResultError:
        return ""


def executors(results_dir: Path) -> tuple[str, ...]:
    """The executors the registry records the cells were submitted with, in the order first used."""
    try:
        state = registry.load(Path(results_dir))
    except RegistryError:
        return ()
    return tuple(dict.fromkeys(s.executor for s in state.submissions))


def scripts(kind_names: tuple[str, ...], cells: list[dict]) -> tuple[tuple[str, str], ...]:
    """Each kind's job code as this checkout holds it: its run module and the modules its Kind.script names for
    the planned cells of that kind (the training loop and the measurements: TA4 5, TA5 16), the code the hand-in
    shows."""
    out = []
    for path in dict.fromkeys(p for name in kind_names if name in PACKAGES for p in _module_paths(name, cells)):
        if (TOOL_ROOT / path).is_file():
            out.append((path, (TOOL_ROOT / path).read_text(encoding="utf-8", errors="backslashreplace")))
    return tuple(out)


def _module_paths(name: str, cells: list[dict]) -> tuple[str, ...]:
    """The files of kind `name`'s run module and of the modules its Kind.script names, relative to TOOL_ROOT."""
    kind = kind_named(name)
    modules = (kind.run.split(":")[0], *kind.script([c for c in cells if kind_of(c) == name]))
    return tuple(m.replace(".", "/") + ".py" for m in modules)


def cell_runs(results_dir: Path, marks: dict[str, str]) -> tuple[CellRun, ...]:
    """Every planned cell's file name, fields and command (`python -m jobs --cell cells/NAME.json --out RESULTS
    --data DATA`); none without a readable plan."""
    try:
        plan = read_plan_cells(results_dir)
        cells = [cell_from_dict(c) for c in plan.cells]
    except (ResultError, CellError, ValueError, TypeError):
        return ()
    labels = Counter(c.label for c in cells)
    data = ' --data "$DATA"' if plan.data_dir else ""  # Produced.setup sets DATA
    out = []
    for c in cells:
        name = _safe(c.label if labels[c.label] == 1 else f"{c.label}-{c.cell_id}")
        out.append(CellRun(name, json.dumps(c.to_dict(), indent=1, sort_keys=True) + "\n",
                           f"python -m jobs --cell {CELLS_DIR}/{name}.json --out {shlex.quote(str(results_dir))}{data}",
                           marks.get(c.cell_id, ""), c.cell_id))
    return tuple(out)


def _safe(name: str) -> str:
    """A file name of letters, digits, '.', '-' and '_' only (no path, no shell word)."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "cell"


def planned(results_dir: Path) -> tuple[str, ...]:
    """plan.json's record of the set: "study NAME, N cells", then one line a field: "field = value" where every
    cell has the same, else "field: v1 | v2 | ..." (the values the cells take, VALUES_SHOWN at most)."""
    try:
        plan = read_plan_cells(results_dir)
    except ResultError:
        return ()
    if not plan.exists:
        return ()
    values: dict[str, list[str]] = {}
    for cell in plan.cells:
        for key, value in cell.items():
            text = json.dumps(value, sort_keys=True)
            seen = values.setdefault(key, [])
            if text not in seen:
                seen.append(text)
    lines = [f"study {json.dumps(plan.study)}, {len(plan.cells)} cells"]
    for key, seen in values.items():
        shown = " | ".join(seen[:VALUES_SHOWN]) + (f" | ... ({len(seen)} values)" if len(seen) > VALUES_SHOWN else "")
        lines.append(f"{key} = {seen[0]}" if len(seen) == 1 else f"{key}: {shown}")
    return tuple(lines)


def how_run(p: Produced) -> str:
    """The section's opening: what each cell is and how this set's cells were run (the registry's executors)."""
    local = "by the local executor (no SLURM), one cell at a time (--exclusive)" if p.exclusive else \
        "by the local executor (no SLURM)"
    ran = " and ".join({"slurm": "as SLURM job arrays", "local": local}.get(e, e) for e in p.executors)
    how = f"; this set's cells were run {ran}" if ran else " (the registry records no submission: how its cells ran is unknown)"
    source = "the study file" if p.study_file is not None and p.study_file.strip() else "plan.json (no study file here)"
    return f"Each cell is one run of the job script below, planned from {source}{how}. These commands reproduce " \
           "the results dir and this hand-in."


def cell_lines(p: Produced) -> list[str]:
    """The command of each experiment (planned cell), COMMANDS_LISTED at most; all are in RUN_ALL."""
    if not p.cells:
        return [f"_{md_text('No readable plan: no cell to list.')}_", ""]
    return [md_text(p.cells_said), "", md_fence("\n".join(p.cell_commands), "sh"), ""]


def produced_markdown(p: Produced) -> list[str]:
    lines = ["## How this was produced", "", md_text(how_run(p)), "",
             "### Commands", "", md_fence("\n".join(p.commands), "sh"), "", "### Each experiment's command", ""]
    lines += cell_lines(p) + ["### Job script", ""]
    lines += [f"- {md_code(c.split(' ', 1)[0])} {md_text(c.split(' ', 1)[1])}" for c in p.code] + [""]
    for path, text in p.scripts:
        lines += [f"{md_code(path)}:", "", md_fence(text), ""]
    lines += ["### Study file", ""] + ([md_text(p.data_line), ""] if p.data_line else [])
    if p.study_file is not None and p.study_file.strip():
        return lines + [md_fence(p.study_file, "toml"), ""]
    why = f"The results dir holds no study file ({STUDY_FILE})" if p.study_file is None else f"{STUDY_FILE} is empty"
    if not p.planned:
        return lines + [f"_{md_text(why + ' and no readable plan.')}_", ""]
    return lines + [md_text(f"{why}; the plan (plan.json) records how the set was made: its study, its cells and "
                            "each field's values over them (a value every cell shares, once):"),
                    "", md_fence("\n".join(p.planned), "text"), ""]
