"""Your own script as a study, on this machine: examples/tiny's loop through plan -> submit --wait
(local executor, 1 and 2 processes) -> status -> collect --json; a script that fails, one that
writes nothing and one that writes a line that is not JSON each end failed saying why; the job
alone through `python -m jobs` keeps a hostile field value one argument; study mistakes exit 2."""
from __future__ import annotations

import json
import sys

import pytest

from jobs.command.cell import CommandCell
from jobs.command.run import cell_folder
from jobs.core.result import read_result
from tests.helpers import STUDIES, assert_plan_refuses, cell_states, cli, cli_json, run_job

TINY = str(STUDIES / "command-tiny.toml")


def test_the_tiny_script_through_plan_submit_status_collect(in_tmp, capsys):
    assert cli(capsys, "plan", "--study", TINY)[0] == 0
    code, out, _ = cli(capsys, "submit", "--study", TINY, "--executor", "local", "--wait", "--interval", "0.5")
    assert code == 1 and "failed" in out  # three cells failed, as they should
    cells = {(c["label"].split("-")[1], c["label"].split("mode=")[1].split("-")[0], c["label"][-2:]): c
             for c in cell_states(capsys, TINY)}
    for key in [("1cpu", "ok", "r0"), ("1cpu", "ok", "r1"), ("2cpu", "ok", "r0"), ("2cpu", "ok", "r1")]:
        assert cells[key]["state"] == "done", cells[key]
    done = read_result(in_tmp / "runs" / "command-tiny" / f"{cells[('2cpu', 'ok', 'r0')]['cell_id']}.json")
    assert done.cell["workdir"] == str(STUDIES.parents[1] / "examples" / "tiny")  # relative to the study file
    assert done.body.world_size == 2 and [line["epoch"] for line in done.body.lines] == [1, 2]
    why = {mode: cells[("1cpu", mode, "r0")] for mode in ("fail", "silent", "garbage")}
    assert {c["state"] for c in why.values()} == {"failed"}
    assert why["fail"]["detail"] == ("the script exited with code 1 (its stderr ends: tiny: failing on purpose "
                                     "(--mode fail))")
    assert "the script wrote no metrics" in why["silent"]["detail"]
    assert "metrics line 2 is not JSON: 'this is not json'" in why["garbage"]["detail"]
    code, out, _ = cli(capsys, "logs", "--study", TINY, why["fail"]["cell_id"])
    assert code == 0 and "tiny: failing on purpose (--mode fail)" in out  # the script's stderr, as it ran

    tables = cli_json(capsys, "collect", "--study", TINY)
    metrics = {(r["metric"], r["processes"]): r for r in tables["command_metrics"]}
    assert {m for m, _ in metrics} == {"epoch", "epoch_s", "loss", "weight"}
    assert metrics[("epoch", 1)]["value"] == metrics[("epoch", 2)]["value"] == 2  # the last line: the timed one
    assert metrics[("loss", 2)]["repeats"] == 2 and metrics[("epoch_s", 1)]["value"] > 0
    scaling = tables["command_scaling"]
    assert [(r["regime"], r["processes"], r["base_processes"]) for r in scaling] == [("weak", 1, 1), ("weak", 2, 1)]
    assert scaling[1]["outcome"] in ("beyond", "equivalent", "inconclusive")
    assert {r["status"] for r in tables["command_cells"]} == {"ok", "failed"}

    code, out, _ = cli(capsys, "collect", "--study", TINY, "--tables")
    assert code == 0 and "command.scaling" in out and "Against each series' fewest processes, 1 comparison" in out
    assert "Scaling: speedup and efficiency" in out and "epoch_s per setup" in out


def test_the_second_rank_keeps_its_own_metrics(in_tmp, capsys):
    cell = CommandCell(command=["python", "train.py", "--step-s", "0"], workdir=str(STUDIES.parents[1] / "examples/tiny"),
                       gpus_per_node=0, cpu_ranks_per_node=2)
    run = run_job(in_tmp, cell, timeout=120)
    assert run.code == 0, run.stderr
    result = read_result(run.path)
    assert result.status == "ok" and result.body.world_size == 2 and len(result.body.lines) == 2
    rank1 = (cell_folder(in_tmp / "results", cell.cell_id) / "metrics.rank1.jsonl").read_text().splitlines()
    assert len(rank1) == 2 and json.loads(rank1[0])["epoch"] == 1
    assert result.env["hostnames"] and result.env["world_size"] == 2


ECHO = """import json, os, sys
json.dump(sys.argv[1:], open("argv.json", "w"))
open(os.environ["ORCHESTRATOR_METRICS"], "a").write(json.dumps({"argc": len(sys.argv) - 1}) + "\\n")
"""


def test_a_hostile_value_stays_one_argument(in_tmp):
    (in_tmp / "echo.py").write_text(ECHO)
    hostile = "1; rm -rf ~ && touch pwned $(touch pwned2)"
    cell = CommandCell(command=[sys.executable, "echo.py", "--tag", "{tag}", "x{tag}y"], workdir=str(in_tmp),
                       gpus_per_node=0, cpu_ranks_per_node=1, tag=hostile)
    run = run_job(in_tmp, cell, timeout=60)
    assert run.code == 0, run.stderr
    assert json.loads((in_tmp / "argv.json").read_text()) == ["--tag", hostile, f"x{hostile}y"]
    assert read_result(run.path).body.timed_line == {"argc": 3.0}
    assert not (in_tmp / "pwned").exists() and not (in_tmp / "pwned2").exists()


@pytest.mark.parametrize("edit, expected", [
    (lambda s: s.replace('"{mode}"', '"{mdoe}"'), "command[7] = '{mdoe}': {mdoe} names no field; fields: "),
    (lambda s: s.replace('mode = "ok"', 'mode = "a\\u0000b"'), "mode holds a NUL character"),
    (lambda s: s.replace('mode = "ok"', f'mode = "{"x" * 5000}"'), "mode is 5,000 characters long: at most 4,096"),
    (lambda s: s.replace('mode = "ok"', 'mode = {a = 1}'), "mode must be a string, a number or true/false"),
    (lambda s: s.replace('"../../examples/tiny"', '"no/such/dir"'), "workdir = 'no/such/dir': "),
    (lambda s: s.replace('cpu_ranks_per_node = [1, 2]', 'cpu_ranks_per_node = [1, 2]\ngpus_per_node = 1'),
     "give gpus_per_node (a process per GPU) or cpu_ranks_per_node (CPU processes), not both"),
])
def test_a_bad_command_study_is_one_line_exit_2_at_plan(in_tmp, capsys, edit, expected):
    text = edit((STUDIES / "command-tiny.toml").read_text())
    text = text.replace('"../../examples/tiny"', f'"{STUDIES.parents[1] / "examples/tiny"}"')
    assert_plan_refuses(in_tmp, capsys, text, expected)


def test_a_script_killed_by_a_signal_fails_saying_so(in_tmp):
    cell = CommandCell(command=[sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)"],
                       workdir=str(in_tmp), gpus_per_node=0, cpu_ranks_per_node=1)
    run = run_job(in_tmp, cell, timeout=60)
    result = read_result(run.path)
    assert run.code == 1 and result.status == "failed" and result.body is None
    assert result.error == "the script was killed by signal 9"
