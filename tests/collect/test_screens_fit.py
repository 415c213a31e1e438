"""Every console view fits the terminal: each verb and flag, on the committed result sets (run 8's
hw5, fast and all-reduce studies on 4 H100s; run 7's faithful, lab and all-reduce studies on 2
H200s) and a PTQ set, at 80 and 100 columns (collect.fit's one rule: tables fold, numbers whole).
In this process (tests/helpers.cli), each set copied once: collect writes into its results dir."""
from __future__ import annotations

import shutil
import tarfile
from pathlib import Path

import pytest

from tests.collect.dirs import REAL_HW5, RUN7_TGZ, write_ptq
from tests.helpers import cli

RUN8 = REAL_HW5.parent
RUN7 = ("r7a", "lab7", "ar7")
SUBMITTED = ("hw5", "fast", "allreduce")
QUESTIONS = {"hw5": ("A.Q4.1",), "lab7": ("lab.scaling",)}  # Q4.1: its table was 220 wide
STUDIES = ("quick", "hw5", "lab", "ptq", "allreduce")  # planned afresh: `plan --cells` of each kind


@pytest.fixture(scope="module")
def sets(tmp_path_factory) -> dict[str, Path]:
    where = tmp_path_factory.mktemp("sets")
    copies = {name: Path(shutil.copytree(RUN8 / name, where / name)) for name in ("hw5", "fast", "allreduce")}
    with tarfile.open(RUN7_TGZ) as tar:
        tar.extractall(where / "r7", members=[m for m in tar.getmembers() if m.name.split("/")[1:2][0:1]
                                              and m.name.split("/")[1] in RUN7], filter="data")
    copies |= {name: where / "r7" / "runs" / name for name in RUN7}
    copies["ptq"] = write_ptq(where / "ptq")
    return copies


def views(sets: dict[str, Path], where: Path) -> list[tuple[str, ...]]:
    """Each verb and flag once per set (submit where nothing is left to run), --compare, and plan of every
    kind (plan --sbatch prints the scripts as written, not wrapped: not here)."""
    argvs: list[tuple[str, ...]] = []
    for name, path in sets.items():
        r = ("--results", str(path))
        argvs += [("collect", *r, "--tables"), ("collect", *r, "--findings"),  # each prints plain collect's too
                  ("status", *r), ("status", *r, "--all")]
        argvs += [("collect", *r, "--question", q) for q in QUESTIONS.get(name, ())]
        if name in SUBMITTED:  # every cell ended: submit queues nothing, and each has its logs
            cell = next(p.stem for p in sorted(path.glob("*.json")) if p.stem not in ("plan", "spent"))
            argvs += [("submit", *r, "--executor", "local"), ("logs", *r, cell)]
    argvs.append(("collect", "--results", str(sets["hw5"]), "--compare", str(sets["r7a"])))
    argvs += [("plan", "--study", s, "--results", str(where / f"plan-{s}"), "--cells") for s in STUDIES]
    return argvs


@pytest.mark.parametrize("columns", [80, 100])
def test_every_view_fits_the_terminal(columns, sets, tmp_path, capsys, monkeypatch):
    """No line of any view is wider than the terminal; a table wider than it is folded into parts."""
    monkeypatch.setenv("COLUMNS", str(columns))
    printed = {}
    for argv in views(sets, tmp_path):
        code, out, err = cli(capsys, *argv)
        assert code == 0 and "submitted 0 cell(s)" in (out if argv[0] == "submit" else "submitted 0 cell(s)"), \
            (argv, err)
        wide = [line for line in out.splitlines() if len(line) > columns]
        assert not wide, (argv, len(wide), wide[0])
        printed[argv] = out
    tables = " ".join(printed["collect", "--results", str(sets["hw5"]), "--tables"].split())
    assert "Table 1: time and speedup of one epoch (weak scaling per step, fixed epoch) (1 of " in tables
