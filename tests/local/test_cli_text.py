"""User texts and error texts are printed as written: "[/]" in a description, a gloo error's
"[/pytorch/...]" in a failure reason, are text, never rich markup."""
from __future__ import annotations


from rich.console import Console

from jobs.core.result import write_result
from orchestrator.cli import main
from orchestrator.commands.submit import wait_for
from orchestrator.plan.plan import read_plan
from results_format.registry import Submission, append_entries
from tests.factories import train_result
from tests.helpers import TINY_LOCAL as STUDY, cell_states, write_study
GLOO = ("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
        "[127.0.0.1]:20345")


def fail_first_cell(results):
    """The first cell's job ended (a pid that is no process) with gloo's error in its result."""
    plan = read_plan(results)
    cell = plan.cells[0]
    write_result(results, train_result(cell, "failed", error=f"Traceback ...\n{GLOO}\n"))
    append_entries(results, [Submission(cell.cell_id, "local", "999999999", plan.array_of(cell.cell_id).name,
                                "2025-01-01T00:00:00+00:00")])
    return plan


def test_a_description_with_brackets_plans(in_tmp, capsys):
    study = write_study(in_tmp, STUDY.read_text().replace('name = "tiny-local"',
                                                          'name = "tiny-local"\ndescription = "see [/] and [red]"'))
    assert main(["plan", "--study", str(study)]) == 0
    assert "see [/] and [red]" in capsys.readouterr().out


def test_status_and_submit_wait_show_a_gloo_error_as_text(in_tmp, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")  # the detail column whole, on one line
    assert main(["plan", "--study", str(STUDY)]) == 0
    plan = fail_first_cell(in_tmp / "runs" / "tiny-local")
    capsys.readouterr()
    assert main(["status", "--study", str(STUDY)]) == 0
    assert "RuntimeError: [" in capsys.readouterr().out
    cells = cell_states(capsys, STUDY)
    assert cells[0]["state"] == "failed" and cells[0]["detail"] == GLOO, "--json has the whole text"
    console = Console(record=True, width=300, markup=False)
    for cell in plan.cells[1:]:  # the other cell ended well, so the wait is over at once
        write_result(plan.results_dir, train_result(cell))
    assert wait_for(plan, console, 0.1) == 1
    assert GLOO in console.export_text()
