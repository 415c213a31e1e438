"""orchestrator.machine_lock: a queue starts a cell only when no cell runs on this machine."""
from __future__ import annotations

import threading
import time

import pytest

from orchestrator import machine_lock


@pytest.fixture(autouse=True)
def machine(tmp_path, monkeypatch):
    monkeypatch.setenv(machine_lock.LOCK_DIR_ENV, str(tmp_path / "locks"))


def test_a_queue_waits_while_a_cell_runs_and_says_so_once():
    said: list[str] = []
    with machine_lock.queue_turn(said.append) as turn:
        with machine_lock.running_cell(str(machine_lock.cell_lock_path())):  # some queue's cell, its ranks
            waiter = threading.Thread(target=machine_lock.wait_until_idle, args=(turn, said.append, 0.02))
            waiter.start()
            time.sleep(0.3)
            assert waiter.is_alive(), "it would have started a cell beside the running one"
        waiter.join(5)
        assert not waiter.is_alive()
    assert len(said) == 1 and "a cell is running on this machine" in said[0]


def test_a_second_queue_waits_for_the_first_to_finish():
    said: list[str] = []
    with machine_lock.queue_turn(said.append):
        def take_a_turn() -> None:
            with machine_lock.queue_turn(said.append):
                pass
        second = threading.Thread(target=take_a_turn)
        second.start()
        time.sleep(0.3)
        assert second.is_alive() and "another local queue" in said[0]
    second.join(5)
    assert not second.is_alive()


def test_a_lock_dir_that_cannot_be_made_is_one_line_naming_the_setting(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(machine_lock.LOCK_DIR_ENV, str(tmp_path / "file" / "locks"))
    with pytest.raises(machine_lock.UserError, match="ORCHESTRATOR_LOCK_DIR"):
        machine_lock.check_lock_dir()
