"""Issue 43: repeats are told apart wherever a cell is named, and a name with its number selects one."""
from __future__ import annotations

from tests.helpers import cli, cli_json


def test_status_logs_and_cancel_tell_repeats_apart(in_tmp, capsys):
    assert cli(capsys, "plan", "--study", "hw5")[0] == 0  # 3 repeats of every configuration
    cells = cli_json(capsys, "status", "--study", "hw5")["cells"]
    labels = [c["label"] for c in cells]
    assert labels[:3] == ["single-1g-b32-e2#1", "single-1g-b32-e2#2", "single-1g-b32-e2#3"]
    assert len(set(labels)) == len(labels) == 87
    code, _, err = cli(capsys, "logs", "single-1g-b32-e2", "--study", "hw5")
    assert code == 2 and err == ("error: 'single-1g-b32-e2' matches 3 cells: name one of single-1g-b32-e2#1, "
                                 "single-1g-b32-e2#2, single-1g-b32-e2#3\n")
    code, _, err = cli(capsys, "logs", "single-1g-b32-e2#2", "--study", "hw5")
    assert code == 2 and err == f"error: cell {cells[1]['cell_id']} was never submitted: no logs; `submit` queues it\n"
    code, out, _ = cli(capsys, "cancel", "single-1g-b32-e2#3", "--study", "hw5")
    assert code == 0 and out == "cancelled nothing; 1 had no live job\n"
    code, out, _ = cli(capsys, "cancel", "single-1g-b32-e2", "--study", "hw5")  # a label: all of its cells
    assert code == 0 and out == "cancelled nothing; 3 had no live job\n"
