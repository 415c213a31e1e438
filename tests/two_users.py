"""Two users on one machine, as on a shared login node: an action run by another user ('nobody',
uid 65534) in a process of its own. Tests using it skip where they cannot switch users (not root);
the dir both users can write in is conftest's `shared_tmp`."""
from __future__ import annotations

import os
import traceback
from collections.abc import Callable

import pytest

NOBODY = 65534


def start_as_nobody(action: Callable[[], None]) -> int:
    """Fork a process that becomes uid/gid 65534 and runs `action`; its pid (exit 0: it did it)."""
    if os.geteuid() != 0:
        pytest.skip("needs root, to act as a second user (nobody)")
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.setgroups([])
            os.setgid(NOBODY)
            os.setuid(NOBODY)
            action()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    return pid


def as_nobody(action: Callable[[], None]) -> None:
    """Run `action` as the other user, and wait for it: the test fails if it raised."""
    _, status = os.waitpid(start_as_nobody(action), 0)
    assert os.waitstatus_to_exitcode(status) == 0, "the other user's action failed (its traceback is above)"
