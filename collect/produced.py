"""How a hand-in was produced (the assignment asks for the script and the commands): the study file
the plan was made from, the commands that plan, submit and collect it, and where each kind's job
code lives. Printed as the report's and answers.md's last section."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Optional

from collect.render import md_code, md_fence, md_text
from jobs.core.kinds import PACKAGES
from jobs.core.layout import STUDY_FILE

STUDY_LIMIT = 100_000  # characters of the study file printed: a study file is a page, not a data set


@dataclass(frozen=True)
class Produced:
    study_file: Optional[str]  # the study file's text as the results dir holds it (None when it holds none)
    commands: tuple[str, ...]  # plan, submit, collect with the results dir, and one cell by hand
    code: tuple[str, ...]  # the job package of each kind that ran (the training script)


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
    return Produced(text, commands, code)


def produced_markdown(p: Produced) -> list[str]:
    lines = ["## How this was produced", "", "Each cell is one run of the job code below, planned from the study "
             "file and submitted as SLURM job arrays; these commands reproduce the results dir and this hand-in.", "",
             "### Commands", "", md_fence("\n".join(p.commands), "sh"), "", "### Training script", ""]
    lines += [f"- {md_code(c.split(' ', 1)[0])} {md_text(c.split(' ', 1)[1])}" for c in p.code] + [""]
    lines += ["### Study file", ""]
    if p.study_file is None:
        lines.append(f"_{md_text('The results dir holds no study file (' + STUDY_FILE + ').')}_")
    else:
        lines.append(md_fence(p.study_file, "toml") if p.study_file.strip() else f"_{md_text(STUDY_FILE + ' is empty.')}_")
    return lines + [""]
