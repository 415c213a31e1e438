"""`collect --compare A --fail-on WORD:PCT` as a CI guard: it fails (exit 1) on new failures, vanished
runs and collapsed values as well as on a slowdown, and exits 2 when nothing could be judged."""
from __future__ import annotations

import pytest

from tests.collect.dirs import DDP, JITTER, SINGLE, repeats
from tests.factories import cell, ptq_cell, ptq_result, train_result, write_results
from tests.helpers import cli


def with_accuracy(accuracy: float, runs: int = 3, **fields):
    """SINGLE's repeats, 10 s each (1% apart), the last epoch's test accuracy `accuracy`."""
    return [train_result(cell(repeat=r, **dict(SINGLE, **fields)), epoch_s=10.0 * JITTER[r], train_s=8.0 * JITTER[r],
                         test_accuracies=[accuracy / 2, accuracy]) for r in range(runs)]


def guard(capsys, a, b) -> tuple[int, str]:
    code, _, err = cli(capsys, "collect", "--results", b, "--compare", a, "--fail-on", "slower:5%")
    return code, err


@pytest.fixture
def baseline(tmp_path):
    return write_results(tmp_path / "a", with_accuracy(0.81) + repeats(DDP, 6.0))


@pytest.mark.parametrize("name, b_results, said", [
    ("every cell OOM", [train_result(cell(repeat=r, **SINGLE), "oom") for r in range(3)]
     + [train_result(cell(repeat=r, **DDP), "oom") for r in range(3)], "3 OOM more than in A"),
    ("one repeat OOM", with_accuracy(0.81, runs=2) + [train_result(cell(repeat=2, **SINGLE), "oom")] + repeats(DDP, 6.0),
     "1 OOM more than in A"),
    ("one repeat gone", with_accuracy(0.81, runs=2) + repeats(DDP, 6.0), "1 of 3 runs vanished"),
    ("a configuration gone", with_accuracy(0.81), "every run vanished: 3 in A, none in B"),
    ("accuracy at 0", with_accuracy(0.0) + repeats(DDP, 6.0), "collapsed: 81.0% (3 runs) in A, 0.0% (3 runs) in B"),
    ("accuracy lost", repeats(SINGLE, 10.0) + repeats(DDP, 6.0), "collapsed: 81.0% (3 runs) in A, not measured"),
])
def test_a_broken_set_fails_the_guard(baseline, tmp_path, capsys, name, b_results, said):
    code, err = guard(capsys, baseline, write_results(tmp_path / "b", b_results))
    assert code == 1, err
    assert err.startswith("fail-on slower:5%: ") and said in err


def test_an_unchanged_set_passes(baseline, tmp_path, capsys):
    assert guard(capsys, baseline, write_results(tmp_path / "b", with_accuracy(0.81) + repeats(DDP, 6.0))) == (0, "")


@pytest.mark.parametrize("other", [[], [ptq_result(ptq_cell(repeat=r)) for r in range(3)]])
@pytest.mark.parametrize("baseline_first", [True, False])
def test_nothing_compared_exits_2(baseline, tmp_path, capsys, other, baseline_first):
    """An empty set, or one of another kind, either side: nothing pairs, so nothing passes."""
    sets = (baseline, write_results(tmp_path / "b", other))
    code, err = guard(capsys, *(sets if baseline_first else sets[::-1]))
    assert code == 2 and "nothing was compared" in err and len(err.splitlines()) == 1


def test_oom_in_both_compares_nothing(tmp_path, capsys):
    oom = [train_result(cell(repeat=r, **SINGLE), "oom") for r in range(2)]
    code, err = guard(capsys, write_results(tmp_path / "a", oom), write_results(tmp_path / "b", oom))
    assert code == 2 and "no configuration has a figure in both sets" in err


def test_one_run_a_side_exits_2_even_at_twice_as_slow(tmp_path, capsys):
    a = write_results(tmp_path / "a", repeats(SINGLE, 10.0, runs=1))
    b = write_results(tmp_path / "b", repeats(SINGLE, 20.0, runs=1))
    code, err = guard(capsys, a, b)
    assert code == 2 and "one run a side" in err and "repeats" in err
