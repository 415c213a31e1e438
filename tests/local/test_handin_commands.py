"""TA4 5: each experiment's command runs as the hand-in prints it, from the dir the hand-in is in, in a shell
that has not been told where the tool is: the printed lines before the commands find `python -m jobs`."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

from collect.produced import produced
from jobs.core.layout import result_files
from orchestrator.cli import main
from tests.helpers import TINY_LOCAL


def test_a_printed_command_runs_as_printed(in_tmp, capsys):
    assert main(["plan", "--study", str(TINY_LOCAL)]) == 0
    results = in_tmp / "runs" / "tiny-local"
    made = produced(results, ("train",))
    for name, text in made.cell_files.items():
        (results / name).parent.mkdir(exist_ok=True)
        (results / name).write_text(text)
    printed = made.cell_commands
    first = next(i for i, line in enumerate(printed) if line.startswith("python -m jobs"))
    assert printed[first - 1].startswith("DATA=")  # the data dir, named once, for the reader to substitute
    # the reader sets $DATA (TA7 15: the plan's dir is the machine's that ran the set)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"DATA": made.data_dir or "data"}
    ran = subprocess.run(["sh", "-ec", "\n".join(printed[:first + 1])], cwd=results, env=env, capture_output=True,
                         text=True, timeout=300)
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert len(list(result_files(results))) == 1
    assert "faithful.py" in {Path(path).name for path, _ in made.scripts}  # the loop itself, not only run.py
