"""How a hand-in was produced (the assignment asks for the script and the commands): the study file
the plan was made from, the commands that plan, submit and collect it, and where each kind's job
code lives. Printed as the report's and answers.md's last section."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import json

from collect.load import read_plan_cells
from collect.render import md_code, md_fence, md_text
from jobs.core.result import ResultError
from jobs.core.kinds import PACKAGES
from jobs.core.layout import STUDY_FILE

STUDY_LIMIT = 100_000  # characters of the study file printed: a study file is a page, not a data set
VALUES_SHOWN = 10  # distinct values of one field listed from the plan; more are counted


@dataclass(frozen=True)
class Produced:
    study_file: Optional[str]  # the study file's text as the results dir holds it (None when it holds none)
    commands: tuple[str, ...]  # plan, submit, collect with the results dir, and one cell by hand
    code: tuple[str, ...]  # the job package of each kind that ran (the training script)
    planned: tuple[str, ...] = ()  # where the study file is missing or empty: plan.json's study name, its cell
    # count, and each field's values over the cells (how the set was made)


def produced(results_dir: Path, kind_names: tuple[str, ...]) -> Produced:
    path = Path(results_dir) / STUDY_FILE
    text: Optional[str] = None
    if path.is_file() and not path.is_symlink():  # another user's link could point at a file not theirs
        with open(path, encoding="utf-8", errors="backslashreplace") as f:
            read = f.read(STUDY_LIMIT + 1)
        text = read if len(read) <= STUDY_LIMIT else read[:STUDY_LIMIT] + "\n# ... (cut: over 100,000 characters)"
    results = str(results_dir)
    commands = (f"python -m orchestrator plan --study {results}/{STUDY_FILE} --results {results}",
                f"python -m orchestrator submit --results {results}",
                f"python -m orchestrator collect --results {results} --report",
                "python -m jobs --cell FILE.json --out DIR   # one cell without SLURM (FILE.json: the cell as planned)")
    code = tuple(f"{PACKAGES[n].replace('.', '/')}/run.py (the {n} job, with its package: python -m jobs --cell runs it)"
                 for n in kind_names if n in PACKAGES)
    return Produced(text, commands, code, () if text and text.strip() else planned(results_dir))


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


def produced_markdown(p: Produced) -> list[str]:
    lines = ["## How this was produced", "", "Each cell is one run of the job code below, planned from the study "
             "file and submitted as SLURM job arrays; these commands reproduce the results dir and this hand-in.", "",
             "### Commands", "", md_fence("\n".join(p.commands), "sh"), "", "### Training script", ""]
    lines += [f"- {md_code(c.split(' ', 1)[0])} {md_text(c.split(' ', 1)[1])}" for c in p.code] + [""]
    lines += ["### Study file", ""]
    if p.study_file is not None and p.study_file.strip():
        return lines + [md_fence(p.study_file, "toml"), ""]
    why = f"The results dir holds no study file ({STUDY_FILE})" if p.study_file is None else f"{STUDY_FILE} is empty"
    if not p.planned:
        return lines + [f"_{md_text(why + ' and no readable plan.')}_", ""]
    return lines + [md_text(f"{why}; the plan (plan.json) records how the set was made: its study, its cells and "
                            "each field's values over them (a value every cell shares, once):"),
                    "", md_fence("\n".join(p.planned), "text"), ""]
