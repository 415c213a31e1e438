"""Issue 45's audit, rerun: an attempt per item (the harness is audit_attempts.py's). Each builds a small
results dir, damages it as the audit did, runs the CLI (or the one library call the item is about, with
a scripted scheduler) in this process, and checks what a user relies on. One line per attempt, then
the count that hold. The SLURM cases of items 1, 2, 3 and 5 run on the real cluster in tests/slurm
(test_private_dir_slurm, test_charges_slurm, test_foreign_jobs_slurm); here they run scripted.

    PYTHONPATH=. python benchmarks/audit45_attempts.py [-k WORD]
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

from audit_attempts import Attempt, cli, exits, main_, one_error, registrar  # the harness (benchmarks/ is this script's dir)

from collect.load import load
from jobs.core.result import Result, write_result
from orchestrator import cancel as cancel_module
from orchestrator import submit as submit_module
from orchestrator.budget import budget
from orchestrator.commands import settle as settle_command
from orchestrator.errors import SchedulerError
from orchestrator.local.machine import Machine
from orchestrator import settle
from orchestrator.plan.plan import install_plan, read_plan
from orchestrator.slurm.slurm_client import parse_elapsed
from orchestrator.watch.status import Monitor
from results_format import registry
from results_format.registry import Submission
from tests.collect.dirs import write_hw5
from tests.factories import cell, train_result, write_results
from tests.helpers import TINY_STUDY
from tests.scripted_slurm import ScriptedSlurm, iso, plan_of

ATTEMPTS: list[Attempt] = []
attempt = registrar(ATTEMPTS)


class Patched:
    """An attribute replaced while a block runs (the local queue recorded, not started)."""

    def __init__(self, owner, name: str, value) -> None:
        self.owner, self.name, self.value = owner, name, value

    def __enter__(self):
        self.before = getattr(self.owner, self.name)
        setattr(self.owner, self.name, self.value)

    def __exit__(self, *exc) -> None:
        setattr(self.owner, self.name, self.before)


# --- 1: a results dir others can write ----------------------------------------------------------------

for _where in ("results dir", "a dir above it", "logs/", "a pickled call"):
    @attempt("1", f"plan and submit refuse a group-writable {_where}")
    def _shared(tmp: Path, where=_where) -> str:
        study, results = tmp / "tiny.toml", tmp / "lab" / "mine"
        study.write_text(TINY_STUDY.read_text())
        if r := exits(cli("plan", "--study", study, "--results", results), 0):
            return r
        (results / "logs").mkdir()
        (results / "logs" / "x_0_submitted.pkl").write_bytes(b"")
        shared = {"results dir": results, "a dir above it": tmp / "lab", "logs/": results / "logs",
                  "a pickled call": results / "logs" / "x_0_submitted.pkl"}[where]
        shared.chmod(shared.stat().st_mode | 0o020)
        return (one_error(cli("plan", "--study", study, "--results", results), "chmod go-w")
                or one_error(cli("submit", "--study", study, "--results", results, "--executor", "local"), "chmod go-w"))


@attempt("1", "plan under umask 002 makes dirs only you can write")
def _umask(tmp: Path) -> str:
    study = tmp / "tiny.toml"
    study.write_text(TINY_STUDY.read_text())
    before = os.umask(0o002)
    try:
        r = exits(cli("plan", "--study", study, "--results", tmp / "runs" / "t"), 0)
    finally:
        os.umask(before)
    return r or ("group-writable" if (tmp / "runs" / "t").stat().st_mode & 0o022 else "")


# --- 2, 3: what jobs cost (scripted sacct) ------------------------------------------------------------

def spent(tmp: Path, squeue: str, sacct: str) -> tuple[list, float]:
    plan = plan_of(tmp, 2)
    registry.append_entries(tmp, [Submission(c, "slurm", f"39_{i}", "n1-g1-t1", iso(600), token="t")
                                  for i, c in enumerate(plan.cell_ids)])
    monitor = Monitor(plan, ScriptedSlurm(squeue=squeue, sacct=sacct))
    rows = monitor.refresh().rows
    return [r.state for r in rows], budget.ledger_of(plan, monitor, rows).spent


@attempt("2", "an array cancelled while pending (sacct's summary row only) is cancelled, 0 GPU-h")
def _summary_row(tmp: Path) -> str:
    states, hours = spent(tmp, "", "39_[0-1]|CANCELLED by 0|0|None assigned|0:0||s-n1-g1-t1-t\n")
    return "" if states == ["cancelled"] * 2 and hours == 0 else f"{states}, {hours:.3f} GPU-h"


@attempt("3", "a requeued job waiting again is charged its first run")
def _requeued(tmp: Path) -> str:
    states, hours = spent(tmp, "39_0|PENDING|0:00||BeginTime|s-n1-g1-t1-t\n39_1|RUNNING|0:10|n1|None|s-n1-g1-t1-t\n",
                          "39_0|NODE_FAIL|65|n1|0:0|gres/gpu=1|s-n1-g1-t1-t\n39_0|PENDING|0|None assigned|0:0||s-n1-g1-t1-t\n")
    return "" if abs(hours - 75 / 3600) < 1e-9 else f"{hours * 3600:.0f} GPU-s, not 65 + 10"


# --- 4, 9: settle ------------------------------------------------------------------------------------

@attempt("4", "settle after a refused sbatch queues the planned repeats")
def _settle_refused(tmp: Path) -> str:
    results, queued = write_hw5(tmp / "hw5", 1), []

    def refused(plan, ids, exclusive=False):
        raise SchedulerError("sbatch: error: Invalid account")
    gpu_node = Machine(gpus=8, cpus=64)
    with Patched(submit_module, "this_machine", lambda: gpu_node), \
            Patched(settle_command, "this_machine", lambda: gpu_node):
        with Patched(submit_module, "start_local_queue", refused):
            first = cli("submit", "--results", results, "--settle", "--executor", "local")
        with Patched(submit_module, "start_local_queue", lambda plan, ids, exclusive=False: queued.append(ids)):
            r = cli("submit", "--results", results, "--settle", "--executor", "local")
    return exits(first, 2, "Invalid account") or exits(r, 0, "46 planned earlier") or \
        ("" if queued and len(queued[0]) == 46 else f"queued {queued}")


@attempt("9", "settle off-cluster on a CPU refuses to pool with GPU runs")
def _settle_cpu(tmp: Path) -> str:
    results = write_hw5(tmp / "hw5", 1)
    before = (results / "plan.json").read_bytes()
    with Patched(settle_command, "this_machine", lambda: Machine(gpus=0, cpus=2)):
        r = cli("submit", "--results", results, "--settle", "--executor", "local")
    return one_error(r, "--executor slurm") or ("" if (results / "plan.json").read_bytes() == before else "plan grew")


# --- 5: another study's job ----------------------------------------------------------------------------

@attempt("5", "cancel --all leaves a job a tokenless registry line points at")
def _forged_line(tmp: Path) -> str:
    plan = plan_of(tmp, 2)
    a, b = plan.cell_ids
    registry.append_entries(tmp, [Submission(a, "slurm", "39_0", "n1-g1-t1", iso(60), token="t"),
                                  Submission(b, "slurm", "77", "n1-g1-t1", iso(30))])  # the forged line
    client = ScriptedSlurm(squeue="39_0|PENDING|0:00||Priority|s-n1-g1-t1-t\n77|RUNNING|1:00|n2|None|their-job\n")
    report = cancel_module.cancel(plan, [a, b], client)
    cancelled = [c for c in client.commands if c[0] == "scancel"]
    return "" if cancelled == [["scancel", "39_0"]] and report.untied == [(b, "77")] else f"ran {cancelled}"


@attempt("5", "a labmate's job squeue -u does not list stays unknown, named, not failed")
def _labmate(tmp: Path) -> str:
    plan = plan_of(tmp, 1)
    registry.append_entries(tmp, [Submission(plan.cell_ids[0], "slurm", "39_0", "n1-g1-t1", iso(3600), token="t",
                                             user="a-labmate")])
    row = Monitor(plan, ScriptedSlurm()).refresh().rows[0]
    return "" if row.state == "unknown" and "a-labmate's" in row.detail else f"{row.state}: {row.detail}"


# --- 6: results the plan does not hold ------------------------------------------------------------------

@attempt("6", "a result of a cell outside the plan is left out of the answers, and named")
def _foreign(tmp: Path) -> str:
    results = write_results(tmp / "r", [train_result(cell(b=8), epoch_s=10.0)])
    write_result(results, train_result(cell(b=64), epoch_s=1.0))
    r = cli("collect", "--results", results)
    return exits(r, 0, "of cells the plan does not hold") or ("in an answer" if "batch 64" in r.out else "")


for _label, _edit in [("schema_version 0", {"schema_version": 0}), ("schema_version -7", {"schema_version": -7}),
                      ("no schema_version", {"schema_version": None}), ("a timed epoch it lacks", {"epochs": []})]:
    @attempt("6", f"a result with {_label} is refused on read")
    def _refused(tmp: Path, edit=_edit) -> str:
        results = write_results(tmp / "r", [train_result(cell(b=8))])
        path = next(p for p in results.glob("*.json") if p.name != "plan.json")
        data = {k: v for k, v in {**json.loads(path.read_text()), **edit}.items() if v is not None}
        path.write_text(json.dumps(data))
        return one_error(cli("collect", "--results", results), path.name)


@attempt("6", "a result with a key twice is refused on read")
def _twice(tmp: Path) -> str:
    results = write_results(tmp / "r", [train_result(cell(b=8), "failed")])
    path = next(p for p in results.glob("*.json") if p.name != "plan.json")
    path.write_text(path.read_text().replace('"status": "failed"', '"status": "failed", "status": "ok"'))
    return one_error(cli("collect", "--results", results), "there twice")


@attempt("6", "a junk 0123456789ab.json is not a cell to redo")
def _junk(tmp: Path) -> str:
    results = write_results(tmp / "r", [train_result(cell(b=8))])
    (results / "0123456789ab.json").write_text("junk")
    return one_error(cli("collect", "--results", results), "no cell of the plan has that id")


# --- 7: text that breaks or floods ---------------------------------------------------------------------

def failed_with(tmp: Path, error: str) -> Path:
    results = write_results(tmp / "r", [train_result(cell(b=8)), train_result(cell(b=64), "failed", error=error)],
                            submitted=[cell(b=8), cell(b=64)])
    return results


@attempt("7", "a lone surrogate, NUL, ESC: collect, --json, --report")
def _surrogate(tmp: Path) -> str:
    results = failed_with(tmp, "OSError: b'\udcff.png' \x00\x1b[2J")
    for extra in ((), ("--json",), ("--report",)):
        r = cli("collect", "--results", results, *extra)
        if r.crash or r.code != 0:
            return f"collect {' '.join(extra)}: {r.crash or r.err[:120]}"
        r.out.encode()
    html = (results / "report.html").read_text()
    return "NUL or ESC in report.html" if "\x00" in html or "\x1b" in html else ""


@attempt("7", "a carriage return hides nothing in status")
def _carriage(tmp: Path) -> str:
    r = cli("status", "--results", failed_with(tmp, "RuntimeError: before\rafter"))
    return "" if "before\\rafter" in "".join(r.out.split()) else "the text before \\r is gone"


@attempt("7", "a 10 MB error: status in under 5 s, a short answers.md")
def _flood(tmp: Path) -> str:
    results = failed_with(tmp, "\n".join(f"line {i}" for i in range(87_408)) + "\nRuntimeError: " + "x" * 10_000_000)
    start = time.monotonic()
    r = cli("status", "--results", results)
    took = time.monotonic() - start
    c = cli("collect", "--results", results)
    size = (results / "answers.md").stat().st_size
    if r.crash or c.crash or took > 5 or len(r.out.splitlines()) > 60 or size > 100_000:
        return f"status {took:.1f} s, {len(r.out.splitlines())} lines; answers.md {size:,} bytes"
    return ""


# --- 8: numbers with no ceiling ------------------------------------------------------------------------

@attempt("8", "--time-min 10^20 is refused")
def _time_min(tmp: Path) -> str:
    study = tmp / "tiny.toml"
    study.write_text(TINY_STUDY.read_text())
    cli("plan", "--study", study, "--results", tmp / "r")
    return one_error(cli("submit", "--study", study, "--results", tmp / "r", "--executor", "local", "--time-min",
                         "99999999999999999999"), "at most")


@attempt("8", "max_cells = 10000000 is refused at once")
def _max_cells(tmp: Path) -> str:
    study = tmp / "tiny.toml"
    study.write_text("max_cells = 10000000\n" + TINY_STUDY.read_text())
    start = time.monotonic()
    r = one_error(cli("plan", "--study", study, "--results", tmp / "r"), "max_cells")
    return r or (f"took {time.monotonic() - start:.1f} s" if time.monotonic() - start > 5 else "")


@attempt("8", "squeue's elapsed UNLIMITED, abc, 1:a, 1:2:3:4, -5:00 read as not known")
def _elapsed(tmp: Path) -> str:
    read = {text: parse_elapsed(text) for text in ("UNLIMITED", "abc", "1:a", "1:2:3:4", "-5:00")}
    return "" if set(read.values()) == {None} else f"{read}"


@attempt("6", "collect --unplanned takes the foreign cell in")
def _unplanned(tmp: Path) -> str:
    results = write_results(tmp / "r", [train_result(cell(b=8))])
    write_result(results, Result(cell(b=64).cell_id, cell(b=64).to_dict(), "failed"))
    return "" if len(load(results, unplanned=True).cells) == 2 else "not taken in"


# --- Low ------------------------------------------------------------------------------------------------

def tiny_plan(tmp: Path) -> Path:
    study = tmp / "tiny.toml"
    study.write_text(TINY_STUDY.read_text())
    cli("plan", "--study", study, "--results", tmp / "r")
    return study


@attempt("low", "--max-repeats of Arabic-Indic digits is refused")
def _digits(tmp: Path) -> str:
    return exits(cli("submit", "--study", tiny_plan(tmp), "--results", tmp / "r", "--settle", "--dry-run",
                     "--max-repeats", "\u0663"), 2, "whole number")


@attempt("low", "cancel with nothing to cancel says so")
def _nothing(tmp: Path) -> str:
    r = cli("cancel", "--study", tiny_plan(tmp), "--results", tmp / "r", "--all")
    return exits(r, 0, "cancelled nothing") or ("cancelled 0 cell(s): ;" if ": ;" in r.out else "")


@attempt("low", "a loop of links named <cell>.json is said in status")
def _loop(tmp: Path) -> str:
    study = tiny_plan(tmp)
    cell_id = read_plan(tmp / "r").cell_ids[0]
    (tmp / "r" / f"{cell_id}.json").symlink_to(f"{cell_id}.json")
    return exits(cli("status", "--study", study, "--results", tmp / "r"), 0, "Too many levels of symbolic links")


@attempt("low", "planning again keeps the settle repeats")
def _replan(tmp: Path) -> str:
    study = tiny_plan(tmp)
    planned = read_plan(tmp / "r")
    extra = [dataclasses.replace(planned.cells[0], repeat=1)]
    install_plan(settle.extended(planned, extra), study.read_text(), {})
    cli("plan", "--study", study, "--results", tmp / "r")
    return "" if extra[0].cell_id in read_plan(tmp / "r").cell_ids else "the repeat was dropped"


if __name__ == "__main__":
    sys.exit(main_(attempts=ATTEMPTS))
