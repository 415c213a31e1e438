"""orchestrator.local.machine_lock: a queue starts a cell only on GPUs no cell runs on."""
from __future__ import annotations

import fcntl
import subprocess
import sys
import threading
import time

import pytest

from orchestrator.local import machine_lock
from tests.helpers import TINY_LOCAL, cli, one_gpu_machine
from tests.two_users import as_nobody


@pytest.fixture(autouse=True)
def machine(tmp_path, monkeypatch):
    monkeypatch.setenv(machine_lock.LOCK_DIR_ENV, str(tmp_path / "locks"))


def test_a_gpu_whose_lock_a_running_cells_ranks_hold_is_not_free_and_the_others_are():
    machine_lock.check_lock_dir()
    with machine_lock.running_cell([str(machine_lock.slot_lock_path(1))]):  # some queue's cell, its ranks
        with machine_lock.placing():
            assert machine_lock.free_slots((0, 1, 2, 3)) == {0, 2, 3}
    with machine_lock.placing():
        assert machine_lock.free_slots((0, 1, 2, 3)) == {0, 1, 2, 3}


def test_a_gpu_stays_taken_while_the_job_started_on_it_lives_even_after_its_queue_let_go(tmp_path):
    """A queue killed a moment after starting a job: the job's ranks hold no lock yet."""
    job = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", "submitit"])
    try:
        machine_lock.check_lock_dir()
        with machine_lock.placing():
            claim = machine_lock.Claim((2,))
            assert machine_lock.free_slots((0, 1, 2, 3)) == {0, 1, 3}
            claim.record(str(job.pid))
        claim.release()
        with machine_lock.placing():
            assert machine_lock.free_slots((0, 1, 2, 3)) == {0, 1, 3}
    finally:
        job.kill()
        job.wait()
    with machine_lock.placing():
        assert machine_lock.free_slots((0, 1, 2, 3)) == {0, 1, 2, 3}


def test_a_second_queue_places_only_once_the_first_has_claimed_its_gpus():
    order: list[str] = []
    with machine_lock.placing():
        def place_too() -> None:
            with machine_lock.placing():
                order.append("second")
        second = threading.Thread(target=place_too)
        second.start()
        time.sleep(0.3)
        order.append("first")
    second.join(5)
    assert order == ["first", "second"]


def test_a_lock_dir_that_cannot_be_made_is_one_line_naming_the_setting(tmp_path, monkeypatch):
    (tmp_path / "file").write_text("")
    monkeypatch.setenv(machine_lock.LOCK_DIR_ENV, str(tmp_path / "file" / "locks"))
    with pytest.raises(machine_lock.UserError, match="ORCHESTRATOR_LOCK_DIR"):
        machine_lock.check_lock_dir()


# ---------------------------------------------------------------- a shared machine: the lock dir is private

def test_the_lock_dir_is_made_private_and_so_are_its_locks(tmp_path, monkeypatch):
    monkeypatch.setenv(machine_lock.LOCK_DIR_ENV, str(tmp_path / "locks"))
    with machine_lock.placing():
        machine_lock.Claim((0,)).record("915")
    assert (tmp_path / "locks").stat().st_mode & 0o777 == 0o700
    for name in ("cell.lock", "queue.lock", "gpu-0.lock"):
        assert (tmp_path / "locks" / name).stat().st_mode & 0o777 == 0o600, name


def test_a_lock_dir_of_ours_open_to_others_is_made_private(tmp_path, monkeypatch):
    """As an earlier version left it (mode 0755, a world-readable cell.lock)."""
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o755)
    (locks / "cell.lock").write_text("")
    (locks / "cell.lock").chmod(0o644)
    monkeypatch.setenv(machine_lock.LOCK_DIR_ENV, str(locks))
    machine_lock.check_lock_dir()
    assert locks.stat().st_mode & 0o777 == 0o700
    assert (locks / "cell.lock").stat().st_mode & 0o777 == 0o600


def test_a_lock_that_is_a_link_is_refused_and_what_it_names_is_never_written(tmp_path, monkeypatch):
    thesis = tmp_path / "thesis.txt"
    thesis.write_text("five years of work")
    locks = tmp_path / "locks"
    locks.mkdir(mode=0o700)
    (locks / "queue.lock").symlink_to(thesis)
    monkeypatch.setenv(machine_lock.LOCK_DIR_ENV, str(locks))
    with pytest.raises(machine_lock.UserError, match=r"queue\.lock.*not a regular file"):
        with machine_lock.placing():
            pass
    (locks / "queue.lock").unlink()
    (locks / "gpu-0.lock").symlink_to(thesis)
    with machine_lock.placing(), pytest.raises(machine_lock.UserError, match=r"gpu-0\.lock.*not a regular file"):
        machine_lock.Claim((0,)).record("915")
    assert thesis.read_text() == "five years of work"


def test_a_lock_dir_another_user_made_is_refused_and_their_link_never_followed(shared_tmp, tmp_path, monkeypatch,
                                                                               capsys):
    """A labmate makes your lock dir first, with queue.lock -> ~/thesis.txt: `submit` refuses it
    (one line naming the dir and the setting) and the thesis is untouched."""
    thesis = shared_tmp / "thesis.txt"  # the victim's file (root's), in a dir the labmate can reach
    thesis.write_text("five years of work")
    locks = shared_tmp / "orchestrator-0"

    def labmate() -> None:
        locks.mkdir(mode=0o777)
        locks.chmod(0o777)
        (locks / "queue.lock").symlink_to(thesis)
        (locks / "cell.lock").write_text("")
        (locks / "cell.lock").chmod(0o666)

    as_nobody(labmate)
    monkeypatch.setenv(machine_lock.LOCK_DIR_ENV, str(locks))
    monkeypatch.chdir(tmp_path)
    one_gpu_machine(tmp_path, monkeypatch)
    assert cli(capsys, "plan", "--study", TINY_LOCAL)[0] == 0
    code, out, err = cli(capsys, "submit", "--study", TINY_LOCAL, "--executor", "local")
    assert code == 2 and err.startswith("error: ") and len(err.splitlines()) == 1, err
    assert f"{locks} belongs to another user" in err and "ORCHESTRATOR_LOCK_DIR" in err
    with pytest.raises(machine_lock.UserError, match="belongs to another user"):
        with machine_lock.placing():
            machine_lock.Claim((0,)).record("915")
    assert thesis.read_text() == "five years of work"


def test_another_user_cannot_open_our_cell_lock_to_stall_the_queue(shared_tmp, monkeypatch):
    """A shared flock held on cell.lock by anyone would make every queue here wait: nobody else
    can open it."""
    monkeypatch.setenv(machine_lock.LOCK_DIR_ENV, str(shared_tmp / "orchestrator-0"))
    machine_lock.check_lock_dir()
    lock = machine_lock.cell_lock_path()

    def labmate() -> None:
        try:
            handle = open(lock)
        except PermissionError:
            return
        fcntl.flock(handle, fcntl.LOCK_SH)
        raise AssertionError(f"nobody could hold a shared lock on {lock}")

    as_nobody(labmate)
