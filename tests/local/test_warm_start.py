"""The warm start server: a task forked from it behaves as the same command started cold (its
streams, environment, directory, arguments, exit status and signals), and dies with its client."""
from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from orchestrator.local import warm_start
from tests.two_users import start_as_nobody

TASK = '''
import os, signal, sys, time
from pathlib import Path
from jobs.core.phases import process_age_s
print("argv", sys.argv[1:], "env", os.environ.get("TASK_WORD"), "cwd", os.getcwd())
print("age", process_age_s())
print("to stderr", file=sys.stderr)
signal.signal(signal.SIGUSR2, lambda *_: sys.exit(5))
if sys.argv[1] == "sleep":
    Path("pid").write_text(str(os.getpid()))
    time.sleep(60)
sys.exit(int(sys.argv[1]))
'''


CODE = str(Path(warm_start.__file__).parents[2])  # the code under test, whichever copy is installed


@pytest.fixture
def task_dir(tmp_path) -> Path:
    (tmp_path / "probe_task.py").write_text(TASK)
    return tmp_path


@pytest.fixture
def server():
    said: list[str] = []
    with warm_start.warm_server(["jobs.core.phases"], said.append) as warm:
        name = warm.started()
        assert name is not None, said
        yield name


def start(name, task_dir: Path, *args: str, module: str = "orchestrator.local.warm_start") -> subprocess.Popen:
    """What submitit's controller does: the command, with the task's streams and environment."""
    command = [sys.executable, "-m", module, name, "-u", "-m", "probe_task", *args]
    out, err = open(task_dir / "out.txt", "w"), open(task_dir / "err.txt", "w")
    with out, err:
        return subprocess.Popen(command, cwd=task_dir, stdout=out, stderr=err,
                                env=dict(os.environ, TASK_WORD="hello", PYTHONPATH=CODE))


def test_a_forked_task_gets_the_command_its_streams_and_its_exit_status(server, task_dir):
    assert start(server, task_dir, "3", "x y").wait(60) == 3
    out = (task_dir / "out.txt").read_text()
    assert f"argv ['3', 'x y'] env hello cwd {task_dir}" in out
    assert (task_dir / "err.txt").read_text() == "to stderr\n"
    age = float(out.split("age ")[1].split()[0])
    assert age < 1.0, "forked from the warm server: no interpreter start"


def test_a_queue_started_before_the_move_runs_its_server_and_tasks_by_the_old_path(task_dir):
    """A local queue started before issue 39 runs `python -m orchestrator.warm_start` for both."""
    alias = importlib.util.find_spec("orchestrator.warm_start")
    assert alias is not None and alias.origin.startswith(CODE), alias  # not an installed copy's old module
    name = f"orchestrator-warm-old-{os.getpid()}"
    server = subprocess.Popen([sys.executable, "-m", "orchestrator.warm_start", "serve", name, "jobs.core.phases"],
                              stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                              env=dict(os.environ, PYTHONPATH=CODE))
    try:
        assert server.stdout is not None and server.stdout.readline().strip() == warm_start.READY
        assert start(name, task_dir, "3", module="orchestrator.warm_start").wait(60) == 3
        age = float((task_dir / "out.txt").read_text().split("age ")[1].split()[0])
        assert age < 1.0, "forked from the warm server"
    finally:
        server.terminate()
        server.wait(30)


def test_without_a_server_the_task_starts_cold_the_same(task_dir):
    assert start("orchestrator-warm-nobody", task_dir, "4").wait(60) == 4
    assert f"env hello cwd {task_dir}" in (task_dir / "out.txt").read_text()


def wait_for_pid(task_dir: Path) -> int:
    deadline = time.monotonic() + 30
    while not (task_dir / "pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    return int((task_dir / "pid").read_text())


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_signals_reach_the_task_and_a_killed_task_kills_its_client_alike(server, task_dir):
    client = start(server, task_dir, "sleep")
    wait_for_pid(task_dir)
    client.send_signal(signal.SIGUSR2)  # submitit's time-limit signal
    assert client.wait(30) == 5
    (task_dir / "pid").unlink()
    client = start(server, task_dir, "sleep")
    os.kill(wait_for_pid(task_dir), signal.SIGKILL)
    assert client.wait(30) == -signal.SIGKILL


def test_a_task_whose_client_is_killed_ends(server, task_dir):
    client = start(server, task_dir, "sleep")
    task = wait_for_pid(task_dir)
    client.kill()  # the controller's last resort: the client cannot pass it on
    client.wait(30)
    deadline = time.monotonic() + 10
    while alive(task) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(task)


def test_a_server_of_another_user_is_sent_nothing_and_the_task_starts_cold(task_dir):
    """After our server died, a labmate binds its name (visible in `ps`): the task must not hand
    its environment (tokens) and log descriptors to them."""
    name = f"orchestrator-warm-taken-{os.getpid()}"
    ready_r, ready_w = os.pipe()
    report_r, report_w = os.pipe()

    def labmate() -> None:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind("\0" + name)
        listener.listen(1)
        listener.settimeout(60)
        os.write(ready_w, b"ready")
        conn, _ = listener.accept()
        conn.settimeout(10)
        data, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
        os.write(report_w, f"{len(data)} bytes {len(fds)} fds".encode())

    server = start_as_nobody(labmate)
    os.close(ready_w)
    os.close(report_w)
    try:
        assert os.read(ready_r, 5) == b"ready"
        assert start(name, task_dir, "4").wait(60) == 4  # cold, as without a server
        assert f"env hello cwd {task_dir}" in (task_dir / "out.txt").read_text()
        assert os.read(report_r, 100) == b"0 bytes 0 fds"
        assert "another user" in (task_dir / "err.txt").read_text()
    finally:
        os.waitpid(server, 0)
        os.close(ready_r)
        os.close(report_r)
