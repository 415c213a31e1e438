"""`collect --compare`: collect's own flags are refused, not ignored; the study is checked as collect
checks it; a result file that is no file is one warning line."""
from __future__ import annotations

import os

import pytest

from tests.collect.dirs import SINGLE, repeats
from tests.factories import write_results
from tests.helpers import cli


@pytest.fixture
def two(tmp_path):
    return tuple(write_results(tmp_path / name, repeats(SINGLE, 10.0)) for name in ("a", "b"))


@pytest.mark.parametrize("flag", [["--question", "Q1"], ["--sort", "epoch_s"], ["--top", "3"], ["--tables"],
                                  ["--findings"]])
def test_collects_own_flags_are_refused_with_compare(two, capsys, flag):
    a, b = two
    code, out, err = cli(capsys, "collect", "--results", b, "--compare", a, *flag)
    assert code == 2 and out == "" and err.startswith(f"error: {flag[0]} shows collect's tables") and len(err.splitlines()) == 1


def test_another_studys_results_are_refused(two, capsys):
    a, b = two
    code, _, err = cli(capsys, "collect", "--study", "lab", "--results", b, "--compare", a)
    assert code == 2 and "holds a plan of study 'by-hand', not 'lab'" in err


def test_a_fifo_among_the_results_is_one_warning_line(two, capsys):
    a, b = two
    os.mkfifo(a / "0123456789ab.json")
    code, _, err = cli(capsys, "collect", "--results", b, "--compare", a)
    assert code == 0 and err.startswith("warning: ") and len(err.splitlines()) == 1 and "0123456789ab.json" in err
