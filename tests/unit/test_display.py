"""orchestrator.commands.display: tables that fit an 80-column terminal, and user texts shown as text."""
from __future__ import annotations

from rich.console import Console

from orchestrator.commands import display
from orchestrator.watch.status import CellRow

GLOO = ("RuntimeError: [/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer "
        "[127.0.0.1]:20345")


def render(table, width: int = 80) -> list[str]:
    console = Console(width=width, record=True, markup=False, color_system=None)
    console.print(table)
    return console.export_text().splitlines()


def rows():
    return [
        CellRow("83bbb0ab9e5f", "ddp-2x2-b8192-e5-lin-wu2-sbn", "failed", "1234567_12", 3723.0, "gr001", GLOO),
        CellRow("0123456789ab", "single-1g-b32-e2", "not submitted"),
        CellRow("fedcba987654", "dp-2g-b128-e2", "skipped", detail="needs 2 GPUs, this machine has 1; run it on "
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
    lines = render(display.status_table("study [/]", [CellRow("c1", "[bold]x", "failed", detail="see [/] and [red]")], 120), 120)
    text = "\n".join(lines)
    assert "study [/]" in text and "[bold]x" in text and "see [/] and [red]" in text


def test_columns_no_cell_has_are_left_out():
    lines = render(display.status_table("hw5", rows()[1:], 80))
    assert lines[1].split() == ["cell", "label", "state", "detail"]
    assert "needs 2 GPUs, this machine has 1" in lines[3]


def text_of(lines: list[str]) -> str:
    return "".join("".join(lines).split())  # wrapped lines joined, whitespace aside


def test_a_failed_cells_whole_reason_is_below_the_table_at_80_columns_as_text():
    lines = render(display.status_view("hw5", rows(), 80))
    assert all(len(line) <= 80 for line in lines)
    table_end = max(i for i, line in enumerate(lines) if "fedcba987654" in line)
    below = lines[table_end + 1:]
    assert "".join(GLOO.split()) in text_of(below), below  # whole, brackets and all (no markup)
    assert "83bbb0ab9e5f" in text_of(below) and "fedcba987654" not in text_of(below)  # only cells that failed


def test_many_cells_failing_alike_share_one_reason_and_the_list_is_bounded():
    many = [CellRow(f"{i:012x}", "single-1g-b32-e2", "failed", detail=f"RuntimeError: cause {i % 30} " + "x" * 80)
            for i in range(3000)]
    lines = render(display.status_view("big", many, 80))
    below = lines[len(many) + 2:]  # after the title, the header and a line per cell
    assert len(below) < 60, below
    assert "RuntimeError:cause0x" in text_of(below) and "and 97 more" in "\n".join(below)
    assert "20 more reasons: `status --json`" in "\n".join(below)
