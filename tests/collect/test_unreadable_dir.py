"""A results dir you may not read (mode 000) or not list (0311: its files open, its list does not)
is one `error:` line naming it and the fix, exit 2: never a traceback, never done cells taken for
failed ones, never a guard that passes on nothing. Run as a second user (root reads anything)."""
from __future__ import annotations

import contextlib
import io
import os

import pytest

import collect.compare  # noqa: F401  (imported here: the other user may not read site-packages)
import collect.compare.guard  # noqa: F401
import collect.report  # noqa: F401
from orchestrator.cli import main
from tests.collect.dirs import SINGLE, repeats
from tests.factories import write_results
from tests.two_users import as_nobody


@pytest.mark.parametrize("mode, verb", [(0o000, "collect"), (0o000, "compare"), (0o000, "status"),
                                        (0o311, "collect"), (0o311, "compare")])
def test_a_results_dir_you_cannot_read_is_one_error_line(shared_tmp, mode, verb):
    a, b = (write_results(shared_tmp / name, repeats(SINGLE, 10.0)) for name in ("a", "b"))
    for path in (a, b):
        for inside in path.iterdir():
            inside.chmod(0o644)
        path.chmod(0o755)
    b.chmod(mode)
    argv = {"collect": ["collect", "--results", b], "status": ["status", "--results", b],
            "compare": ["collect", "--results", a, "--compare", b, "--fail-on", "slower:5%"]}[verb]

    def run() -> None:
        os.chdir(shared_tmp)
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = main([str(x) for x in argv])
        lines = err.getvalue().splitlines()
        assert code == 2 and len(lines) == 1, (code, lines)
        assert lines[0].startswith(f"error: results dir {b} is mode {mode:04o}") and "chmod a+rx" in lines[0], lines

    try:
        as_nobody(run)
    finally:
        b.chmod(0o755)
