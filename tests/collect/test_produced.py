"""The hand-in says how it was produced (the assignment asks for the script and a README of the
commands): the study file, the commands with the results dir, and where the training script is, in
answers.md, report.md and report.html alike, escaped as any other text."""
from __future__ import annotations

import html
import json
import re

from collect.report import collect, write_report
from tests.collect.dirs import write_mixed

STUDY = 'name = "hw5"  # <b>&`x`</b>\n[[grid]]\nbatch_per_gpu = [32, 128]\n'


def test_every_hand_in_lists_the_commands_the_script_and_the_study_file(tmp_path):
    results = write_mixed(tmp_path / "r")
    (results / "study.toml").write_text(STUDY)
    write_report(collect(results))
    for name in ("answers.md", "report.md", "report.html"):
        text = (results / name).read_text()
        assert f"python -m orchestrator plan --study {results}/study.toml --results {results}" in text, name
        assert f"python -m orchestrator collect --results {results}" in text, name
        assert "jobs/train/run.py" in text and "python -m jobs --cell" in text, name
        assert "batch_per_gpu = [32, 128]" in text, name
    html = (results / "report.html").read_text()
    assert "&lt;b&gt;&amp;`x`&lt;/b&gt;" in html and "<b>&`x`</b>" not in html  # the file's text, not markup
    assert "<b>&`x`</b>" in (results / "report.md").read_text().split("```toml")[1]  # shown literally in a fence


def test_a_dir_without_a_study_file_says_so(tmp_path):
    results = write_mixed(tmp_path / "r")
    (results / "study.toml").unlink(missing_ok=True)
    write_report(collect(results))
    assert "The results dir holds no study file (study.toml); the plan (plan.json) records" in \
        (results / "report.md").read_text()
    assert "The results dir holds no study file (study.toml); the plan (plan.json) records" in \
        (results / "report.html").read_text()


def test_without_a_study_file_no_plan_command_is_printed_that_cannot_run(tmp_path):
    """TA5 12: `plan --study DIR/study.toml` was printed under "These commands reproduce" beside "The results dir
    holds no study file": where there is none (or it is empty), the commands say plan.json is the plan instead."""
    for study in (None, ""):
        results = write_mixed(tmp_path / f"r{study is None}")
        (results / "study.toml").unlink(missing_ok=True)
        if study is not None:
            (results / "study.toml").write_text(study)
        write_report(collect(results))
        for name in ("answers.md", "report.md", "report.html"):
            text = (results / name).read_text()
            assert "orchestrator plan --study" not in text, name
            assert "no plan command: the results dir" in text and "its plan.json is the plan" in text, name
            assert "planned from plan.json (no study file here)" in text, name


def test_an_empty_study_file_gives_how_the_plan_made_the_set(tmp_path):
    """study.toml empty (TA2 31/12): the appendix gives plan.json's study, its cells and each field's values
    over them, so the set can be made again."""
    results = write_mixed(tmp_path / "r")
    (results / "study.toml").write_text("")
    collect(results)
    section = (results / "answers.md").read_text().split("### Study file")[1]
    assert "study.toml is empty; the plan (plan.json) records how the set was made" in section
    assert re.search(r'^study "mixed", \d+ cells$', section, flags=re.M)
    assert re.search(r"^batch_per_gpu: 32 \| 128", section, flags=re.M)  # a field the cells vary in, with its values
    assert re.search(r'^model = "resnet18"$', section, flags=re.M)  # one they share, once


def test_the_hand_in_gives_each_cells_command_its_file_and_the_scripts_text(tmp_path):
    """TA3 6: a README of the commands to run for each experiment, and the python script itself: every planned
    cell's `python -m jobs --cell cells/NAME.json ...` (its file beside the hand-in, the cell as planned) and the
    job script's text, not only its path."""
    import json

    from jobs.core.kinds import cell_from_dict

    results = write_mixed(tmp_path / "r")
    write_report(collect(results))
    plan = json.loads((results / "plan.json").read_text())
    commands = [line for line in (results / "cells" / "run_all.sh").read_text().splitlines()
                if line.startswith("python -m jobs")]  # after the lines that find the tool and name $DATA
    assert len(commands) == len(plan["cells"]["ids"]) if isinstance(plan["cells"], dict) else len(plan["cells"])
    for name in ("answers.md", "report.md", "report.html"):
        text = (results / name).read_text()
        text = html.unescape(text) if name.endswith(".html") else text  # the command's quotes, escaped there
        assert commands[0] in text and "def run(" in text, name  # a command per cell; run.py's text
    name = commands[0].split("--cell ")[1].split()[0]
    cell = cell_from_dict(json.loads((results / name).read_text()))
    assert cell.cell_id in plan["cells"]["ids"] and f"--out {results}" in commands[0]


def test_the_cell_commands_mark_the_cells_with_no_result_and_the_measurements_code_is_printed(tmp_path):
    """TA5 16: "One command per planned cell (72)" listed the 35 that never ran unmarked beside the 37 that did, and
    run.py imports the code of the measurements the answers use (comm, evidence, launch), which was not printed."""
    from collect.load import load
    from jobs.core.kinds import cell_from_dict
    from jobs.core.result import Status

    results = write_mixed(tmp_path / "r")
    write_report(collect(results))
    frame = load(results).envelopes
    unran = set(frame.cell_id[~frame.status.isin(list(Status))])
    assert unran and len(unran) < len(frame)
    script = (results / "cells" / "run_all.sh").read_text()
    for line in (x for x in script.splitlines() if x.startswith("python -m jobs")):
        name = line.split("--cell ")[1].split()[0]
        cell_id = cell_from_dict(json.loads((results / name).read_text())).cell_id
        assert ("# no result: " in line) == (cell_id in unran), line
    text = (results / "answers.md").read_text()
    assert f"the {len(unran)} with no result are marked" in text
    for path in ("jobs/runtime/comm.py", "jobs/train/evidence.py", "jobs/runtime/launch.py", "jobs/train/run.py",
                 "jobs/train/model.py"):
        assert f"`{path}`:" in text, path  # its text printed below its path
    assert "def gradient_bytes(" in text and "def gathered_spread(" in text
    assert "def build_model(" in text  # TA6 16: the model the cells trained


def test_the_commands_name_the_executor_the_registry_records(tmp_path):
    """TA3 14: a set the local executor ran says so and gives `submit --executor local`, not SLURM job arrays."""
    import json

    results = write_mixed(tmp_path / "r")
    line = {"array": "n1-g1-t1", "cell_id": "0" * 12, "executor": "local", "job_id": None, "log_err": None,
            "log_out": None, "queue_pid": 1, "submitted_at": "2026-11-27T22:03:25+00:00", "time_min": None, "token": None}
    (results / "registry.jsonl").write_text(json.dumps(line) + "\n")
    collect(results)
    text = (results / "answers.md").read_text()
    assert f"python -m orchestrator submit --results {results} --executor local" in text
    assert "run by the local executor (no SLURM)" in text and "SLURM job arrays" not in text


def test_answers_md_says_once_how_many_planned_cells_have_a_result(tmp_path):
    """TA3 15: only the console said the answers were provisional; answers.md says it at the top, with how many
    planned cells have a result, and where the "more planned" runs come from."""
    from collect.load import load
    from tests.collect.dirs import mixed_results
    from tests.factories import write_results

    results = write_mixed(tmp_path / "r")
    collect(results)
    statuses = load(results).envelopes.status
    done = int(statuses.isin(["ok", "oom", "failed", "timeout"]).sum())
    assert 0 < done < len(statuses)
    text = (results / "answers.md").read_text()
    assert text.count(f"**Provisional: {done} of {len(statuses)} planned cells have a result (") == 1
    assert "any repeats queued later to settle a comparison" in text and "submit --settle" not in text  # TA4 24
    complete = write_results(tmp_path / "complete", mixed_results(), study="mixed")
    collect(complete)
    assert f"**All {len(load(complete).envelopes)} planned cells have a result (" in (complete / "answers.md").read_text()


def test_a_local_submission_its_queue_never_started_is_not_pending(tmp_path):
    """TA4 16: cells queued locally whose queue never started them (no job id) are "queued and never started" in the
    header, as `status` has them not running (failed where the queue stopped), never "pending" (SLURM's word)."""
    import json
    from collect.load import load

    results = write_mixed(tmp_path / "r")
    waiting = [c for c, s in zip(load(results).envelopes.cell_id, load(results).envelopes.status, strict=True)
               if s == "not submitted"]
    assert waiting
    lines = [{"array": "n1-g1-t1", "cell_id": c, "executor": "local", "job_id": None, "log_err": None, "log_out": None,
              "queue_pid": 1, "submitted_at": "2026-11-27T22:03:25+00:00", "time_min": None, "token": None}
             for c in waiting]
    (results / "registry.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    collect(results)
    queued = int((load(results).envelopes.status == "queued").sum())
    assert queued
    head = (results / "answers.md").read_text().split("## ", 1)[0]
    assert f"{queued} queued and never started" in head and "pending" not in head, head


def test_one_description_of_the_data_beside_the_study_file_and_in_the_answers(tmp_path):
    """TA4 17: a study file's comment said "synthetic CIFAR-10 ... the accuracies mean nothing" while the answers
    said "synthetic (a colour per class plus noise)": the hand-in says the data once, above the file, in the
    answers' words, and calls the file's comments its author's."""
    import re as regex
    import shutil

    from tests.collect.dirs import REAL_HW5

    path = tmp_path / "r"
    shutil.copytree(REAL_HW5, path)  # run8: synthetic, 50,000 images
    (path / "study.toml").write_text("# synthetic CIFAR-10: the accuracies mean nothing\n" + STUDY)
    collect(path)
    text = (path / "answers.md").read_text()
    above = text.split("### Study file", 1)[1].split("```toml", 1)[0]
    assert "The data the cells read: synthetic (a colour per class plus noise) in CIFAR-10's on-disk format" in above
    assert "comments are its author's" in above
    said = set(regex.findall(r"synthetic \(([^)]*)\)", text.split("## How this was produced")[0]))
    assert said == {"a colour per class plus noise"}, said


def test_a_second_collect_rewrites_no_file_whose_bytes_are_the_same(tmp_path):
    """A study of 100,000 cells writes 100,000 cells/NAME.json: each atomic write costs two fsyncs, on /scratch
    minutes, so a collect run again keeps every file whose bytes are already there, and replaces one that differs."""
    results = write_mixed(tmp_path / "r")
    write_report(collect(results))
    cells = sorted((results / "cells").glob("*.json"))
    before = {p: p.stat().st_ino for p in cells}
    cells[0].write_text("{}")
    stale = cells[0].stat().st_ino
    write_report(collect(results))
    assert all(p.stat().st_ino == before[p] for p in cells[1:])  # the same file, not a replacement
    assert cells[0].stat().st_ino != stale and cells[0].read_text() != "{}"


def test_a_cell_that_ended_with_no_answer_is_named_in_the_header_and_its_command_marked(tmp_path):
    """TA7 15: "(35 ok, 1 OOM, 1 failed)" named no failed cell (its job had ended and left no result file, so its
    command was not marked either): the header names each such cell by its file under cells/ and why, and its
    command says its status."""
    from tests.factories import cell

    results = write_mixed(tmp_path / "r")
    ended = cell("ddp", 128, 4)  # planned, not submitted: its job ends with no result file
    _ended_with_no_result(results, ended.cell_id, gpus=4)
    write_report(collect(results))
    script = (results / "cells" / "run_all.sh").read_text()
    failed = [line for line in script.splitlines() if line.endswith("  # failed")]
    assert len(failed) == 2 and any("ddp-4g-b128" in line for line in failed), failed  # and the NCCL error's cell
    assert "  # timeout" in script
    for name in ("answers.md", "report.md", "report.html"):
        head = html.unescape((results / name).read_text()).split("Contents" if name != "answers.md" else "## ", 1)[0]
        assert "Ended with no answer: " in head, name
        assert "cells/ddp-4g-b128-e2.json (failed: its job ended and wrote no result file)" in head, name
        assert "(failed: RuntimeError: NCCL error)" in head and "(timeout: " in head, name


def test_the_printed_commands_take_the_data_dir_from_the_reader_not_the_machine_that_ran_them(tmp_path):
    """TA7 15: DATA=/work/steering/.devrun/proj/data, a path on the machine that ran the set, was set in the printed
    commands: $DATA is now the reader's to set (the command stops, saying so, where it is not), and the plan's dir
    is named in a comment on that one line, however it is spelled."""
    import subprocess

    results = write_mixed(tmp_path / "r")
    plan = json.loads((results / "plan.json").read_text())
    plan["data_dir"] = "/their/data\nrm -rf ~"
    (results / "plan.json").write_text(json.dumps(plan))
    collect(results)
    script = (results / "cells" / "run_all.sh").read_text()
    line = next(x for x in script.splitlines() if "DATA=" in x)
    assert line.startswith('DATA="${DATA:?') and '"/their/data\\nrm -rf ~"' in line and "\nrm" not in script
    ran = subprocess.run(["sh", "-c", line + '\necho "$DATA"'], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin"})
    assert ran.returncode != 0 and "set DATA to your data dir" in ran.stderr
    ran = subprocess.run(["sh", "-c", line + '\necho "$DATA"'], capture_output=True, text=True,
                         env={"PATH": "/usr/bin:/bin", "DATA": "/mine"})
    assert ran.stdout == "/mine\n"
    del plan["data_dir"]  # a plan written before it named one: nothing asks for $DATA
    (results / "plan.json").write_text(json.dumps(plan))
    collect(results)
    script = (results / "cells" / "run_all.sh").read_text()
    assert "DATA" not in script and "# the plan names no data dir" in script


def test_tables_md_marks_the_row_whose_run_ended_with_no_answer(tmp_path):
    """TA7 15: tables.md had no "failed" mark for the row of the failed cell (1 GPU, batch 128: "repeats 1", its
    second run gone unsaid): the row's repeats say "+1 failed", and a footnote says what that is."""
    from tests.collect.dirs import MISSING, PENDING, mixed_results
    from tests.factories import cell, write_results

    lost = cell("single", 128, repeat=3)  # beside the three ok repeats of 1 GPU, batch 128
    results = write_results(tmp_path / "r", mixed_results(), planned=PENDING + MISSING + (lost,), submitted=PENDING,
                            study="mixed")
    _ended_with_no_result(results, lost.cell_id, gpus=1)
    collect(results)
    q1 = (results / "tables.md").read_text().split("### ")[1]
    row = next(line for line in q1.splitlines() if line.startswith("| 128 |"))
    assert row.endswith("| 3 (+1 failed) |"), row
    assert "+N failed beside the repeats: runs of the configuration that ended with no answer" in q1
    assert not any(line.startswith("| 32 |") and "failed" in line for line in q1.splitlines())


def _ended_with_no_result(results, cell_id: str, gpus: int) -> None:
    """The cell submitted as job 17, whose job has ended (spent.json: ENDED) and left no result file."""
    with open(results / "registry.jsonl", "a") as f:
        f.write(json.dumps({"cell_id": cell_id, "executor": "local", "job_id": "17", "array": "a",
                            "submitted_at": "2026-01-01T00:00:00+00:00"}) + "\n")
    charge = {"cell_id": cell_id, "job_id": "17", "gpus": gpus, "elapsed_s": 360.0, "source": "limit",
              "state": "ENDED", "live": False, "gpu_hours": 0.1 * gpus}
    (results / "spent.json").write_text(json.dumps({"charges": [charge], "measured_at": ""}))
