"""orchestrator.display: tables that fit an 80-column terminal, and user texts shown as text."""
from __future__ import annotations

from rich.console import Console

from orchestrator import display
from orchestrator.status import CellStatus

GLOO = ("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
        "[127.0.0.1]:20345")


def render(table, width: int = 80) -> list[str]:
    console = Console(width=width, record=True, markup=False, color_system=None)
    console.print(table)
    return console.export_text().splitlines()


def rows():
    return [
        CellStatus("83bbb0ab9e5f", "ddp-2x2-b8192-e5-lin-wu2-sbn", "failed", "1234567_12", 3723.0, "gr001", GLOO),
        CellStatus("0123456789ab", "single-1g-b32-e2", "not submitted"),
        CellStatus("fedcba987654", "dp-2g-b128-e2", "skipped", detail="needs 2 GPUs, this machine has 1; run it on "
                   "SLURM (submit --executor slurm on a login node) or on a machine with 2 GPUs"),
    ]


def test_status_in_80_columns_keeps_ids_and_labels_whole_and_cuts_details_to_one_line():
    lines = render(display.status_table("hw5", rows(), 80))
    assert all(len(line) <= 80 for line in lines)
    for r in rows():
        [line] = [line for line in lines if r.cell_id in line]  # one line per cell
        assert r.label in line and r.state in line
    failed = next(line for line in lines if "83bbb0ab9e5f" in line)
    assert "RuntimeError: [/pyto" in failed and failed.rstrip().endswith("…")


def test_a_wide_terminal_shows_the_whole_detail():
    lines = render(display.status_table("hw5", rows(), 250), 250)
    assert any(GLOO in line for line in lines)


def test_markup_like_texts_print_as_written(tmp_path):
    lines = render(display.status_table("study [/]", [CellStatus("c1", "[bold]x", "failed", detail="see [/] and [red]")], 120), 120)
    text = "\n".join(lines)
    assert "study [/]" in text and "[bold]x" in text and "see [/] and [red]" in text


def test_columns_no_cell_has_are_left_out():
    lines = render(display.status_table("hw5", rows()[1:], 80))
    assert lines[1].split() == ["cell", "label", "state", "detail"]
    assert "needs 2 GPUs, this machine has 1" in lines[3]
