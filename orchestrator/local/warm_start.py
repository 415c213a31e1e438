"""Local jobs without an interpreter start each: a warm process forks each task of a cell.

Started cold, every task of a local cell (a process per rank, through submitit's local executor)
spent 2-5 s of a 2-core machine importing torch and torchvision before its first line, and 1-2 s
freeing them after its last: more than a quick cell's epochs. The local queue starts one server
per run, which imports the job's modules once, then forks a child for each task: the very
command (`-m submitit.core._submit FOLDER`) with the task's environment, working directory and
standard streams, in a process of its own, as fresh as the imports left it (nothing in the server
ever runs a job: no CUDA, no thread pool).

submitit's controller starts the tasks through the client half of this module
(`python -m orchestrator.local.warm_start ADDRESS -u -m MODULE ARGS`), which asks the server for the
child, passes on every signal the controller sends it (cancel, time limit) and exits as the child
did. The server kills a child whose client is gone (killed). Where there is no server, the
client becomes the cold command itself (exec), exactly as before.

Each side talks to its own user only (the socket's peer credentials): the server refuses another
user's client, and a client that finds another user's server on the name (its name shows in `ps`;
anyone may bind it once the server is gone) sends it nothing, neither environment nor streams,
and starts cold.

    python -m orchestrator.local.warm_start serve ADDRESS MODULE...     (the local queue starts it)
"""
from __future__ import annotations

import contextlib
import json
import os
import secrets
import select
import shlex
import signal
import socket
import struct
import subprocess
import sys
from collections.abc import Callable, Iterator
from typing import Any, NoReturn, Optional

FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2, signal.SIGCONT)
MAX_REQUEST = 1 << 20  # bytes of one request: argv, environment, working directory
READY = "ready"  # the server's first line on stdout once it serves
POLL_S = 0.05
READY_TIMEOUT_S = 300.0  # the imports, on a loaded machine


def _address(name: str) -> str:
    """Linux's abstract namespace: no file to clean up, gone with the server."""
    return "\0" + name


def _peer_uid(conn: socket.socket) -> int:
    """The uid of the process at the other end (the server's: as it was when it listened)."""
    creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return struct.unpack("3i", creds)[1]


# ---------------------------------------------------------------- client: what submitit's controller runs

def client(name: str, command: list[str]) -> NoReturn:
    """Run `command` (python's arguments: options, then -m MODULE ARGS) as a child of the server,
    or cold (exec) where none answers; exit as it exits."""
    module, args = _module_of(command)
    try:
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        conn.connect(_address(name))
        if _peer_uid(conn) != os.getuid():
            print(f"warm_start: {name} is served by another user (uid {_peer_uid(conn)}); sent it nothing, "
                  "starting cold", file=sys.stderr, flush=True)
            raise OSError("another user's server")
        request = {"module": module, "args": args, "env": dict(os.environ), "cwd": os.getcwd()}
        socket.send_fds(conn, [json.dumps(request).encode()], [0, 1, 2])
        first = _receive(conn)
    except OSError:
        first = None
    if first is None:  # no server, or it refused before starting anything: start cold
        os.execv(sys.executable, [sys.executable, *command])
    if "pid" in first:  # the child runs; it says how it ended (or the server, if it was killed)
        pid = first["pid"]
        for sig in FORWARDED:
            signal.signal(sig, lambda signum, _frame: _kill(pid, signum))
        first = _receive(conn) or {"exit": 1}  # nothing: the server died with the child's status
    _exit_as(int(first.get("exit", 1)))


def _receive(conn: socket.socket) -> Optional[dict[str, Any]]:
    """The next message, or None once the other end has closed."""
    data = conn.recv(MAX_REQUEST)
    return json.loads(data) if data else None


def _exit_as(code: int) -> NoReturn:
    if code < 0:  # the child was killed by a signal: end the same way
        if -code not in (signal.SIGKILL, signal.SIGSTOP):  # those two have no handler to reset
            signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


def _module_of(command: list[str]) -> tuple[str, list[str]]:
    """('MODULE', ARGS) of python's arguments `[-u] -m MODULE ARGS...`."""
    if "-m" not in command or command.index("-m") + 1 >= len(command):
        raise SystemExit(f"warm_start: expected python arguments with -m MODULE, got {command}")
    at = command.index("-m")
    return command[at + 1], command[at + 2:]


def _kill(pid: int, signum: int) -> None:
    try:
        os.kill(pid, signum)
    except OSError:
        pass


# ---------------------------------------------------------------- server: the local queue's warm process

class Server:
    def __init__(self, name: str) -> None:
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.listener.bind(_address(name))
        self.listener.listen(64)
        self.children: dict[int, socket.socket] = {}
        self.parent = os.getppid()
        self.stopping = False

    def serve(self) -> None:
        """Fork a child per request until asked to stop (SIGTERM) or the queue is gone, and then
        until the children it started have ended (each client waits for its child's status)."""
        signal.signal(signal.SIGTERM, lambda *_: setattr(self, "stopping", True))
        while self.children or not (self.stopping or os.getppid() != self.parent):
            ready, _, _ = select.select([self.listener, *self.children.values()], [], [], POLL_S)
            for conn in ready:
                if conn is self.listener:
                    self.accept()
                else:
                    self.check_client(conn)
            self.reap()

    def check_client(self, conn: socket.socket) -> None:
        """A client sends nothing after its request: its end reads only once it has ended. Killed
        (the controller's last resort, a cancel), it could pass nothing on: its child is killed.
        Watched here, not by a thread in the child: a thread there while the job forks its loader
        workers risks CPython's fork deadlock (before 3.12, gh-112275)."""
        try:
            gone = conn.recv(1, socket.MSG_DONTWAIT) == b""
        except BlockingIOError:
            return
        except OSError:
            gone = True
        if gone:
            pid = next(pid for pid, c in self.children.items() if c is conn)
            _kill(pid, signal.SIGKILL)

    def accept(self) -> None:
        conn, _ = self.listener.accept()
        try:
            if _peer_uid(conn) != os.getuid():
                raise OSError("another user")
            data, fds, _, _ = socket.recv_fds(conn, MAX_REQUEST, 3)
            request = json.loads(data)
            if len(fds) != 3:
                raise OSError("no standard streams")
        except (OSError, ValueError):
            conn.close()  # the client then starts cold
            return
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            self.listener.close()
            for other in self.children.values():
                other.close()
            run_child(conn, fds, request)
        for fd in fds:
            os.close(fd)
        self.children[pid] = conn

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is not None:
                _send(conn, {"exit": os.waitstatus_to_exitcode(status)})
                conn.close()


def _send(conn: socket.socket, message: dict[str, Any]) -> None:
    try:
        conn.send(json.dumps(message).encode())
    except OSError:  # the client is gone
        pass


def run_child(conn: socket.socket, fds: list[int], request: dict[str, Any]) -> NoReturn:
    """In the forked child: become the task (its streams, environment, directory, argv), run its
    module as __main__, tell the client how it ended, and exit without the interpreter's teardown."""
    import io
    import runpy
    import traceback

    from jobs.runtime.process_exit import wind_down

    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the server's own handler
    _send(conn, {"pid": os.getpid()})  # first, so that it comes before how the child ended
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)  # python -u
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True, errors="backslashreplace")
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    sys.path[0] = request["cwd"]  # as `python -m` puts it
    sys.argv = [request["module"], *request["args"]]
    code: Optional[int | str] = 0
    try:
        runpy.run_module(request["module"], run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
    except BaseException:  # as the interpreter would: the traceback, exit status 1
        traceback.print_exc()
        code = 1
    if isinstance(code, str):
        print(code, file=sys.stderr)
        code = 1
    wind_down()  # before the client learns the end: once it exits, the server kills this process
    _send(conn, {"exit": code or 0})
    os._exit(code or 0)


# ---------------------------------------------------------------- the local queue's side

class WarmServer:
    """The queue's server, importing `modules`, started on first use (once the machine is idle:
    its imports would slow a cell running beside it) and stopped by close(); it ends once the
    children it started have ended."""

    def __init__(self, modules: list[str], say: Callable[[str], None]) -> None:
        self.modules, self.say = modules, say
        self.proc: Optional[subprocess.Popen[str]] = None
        self.name: Optional[str] = None

    def started(self) -> Optional[str]:
        """Its name for python_for, or None where it did not start (tasks then start cold)."""
        if self.proc is None:
            name = f"orchestrator-warm-{os.getuid()}-{os.getpid()}-{secrets.token_hex(4)}"
            self.proc = subprocess.Popen([sys.executable, "-m", "orchestrator.local.warm_start", "serve", name, *self.modules],
                                         stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)
            assert self.proc.stdout is not None
            ready, _, _ = select.select([self.proc.stdout], [], [], READY_TIMEOUT_S)
            if ready and self.proc.stdout.readline().strip() == READY:
                self.name = name
            else:
                self.say(f"the warm start server did not start (exit {self.proc.poll()}): each task starts its "
                         "own interpreter")
                self.proc.kill()
        return self.name

    def close(self) -> None:
        if self.proc is not None:
            self.proc.terminate()


@contextlib.contextmanager
def warm_server(modules: list[str], say: Callable[[str], None]) -> Iterator[WarmServer]:
    server = WarmServer(modules, say)
    try:
        yield server
    finally:
        server.close()


def python_for(name: Optional[str]) -> Optional[str]:
    """What submitit's local executor should run as `python` (None: the interpreter itself)."""
    return None if name is None else f"{shlex.quote(sys.executable)} -m orchestrator.local.warm_start {shlex.quote(name)}"


def serve(name: str, modules: list[str]) -> None:
    import gc
    import importlib

    for module in modules:
        importlib.import_module(module)
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_initialized():  # a forked child could not use the GPU
        print("warm_start: CUDA was initialized by an import; not serving (tasks start cold)", file=sys.stderr)
        return
    gc.freeze()  # the children's copies of these pages stay shared: the collector never touches them
    server = Server(name)
    print(READY, flush=True)
    os.dup2(2, 1)  # nobody reads the pipe after that line: a full pipe would block the server
    server.serve()


def main(argv: list[str]) -> None:
    if argv[:1] == ["serve"]:
        serve(argv[1], argv[2:])
        sys.stderr.flush()
        os._exit(0)  # no teardown: it would take seconds, and with the collector frozen it would warn of leaks
    else:
        client(argv[0], argv[1:])


if __name__ == "__main__":
    main(sys.argv[1:])
