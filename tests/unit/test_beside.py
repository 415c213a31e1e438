"""jobs.core.beside: what ran beside a local cell, from the other GPUs' locks at its start and end."""
from __future__ import annotations

import fcntl
import json

from jobs.core.beside import BESIDE_ENV, Beside, beside, look


def test_cells_running_at_the_start_started_during_the_run_or_running_at_the_end_count():
    first = {1: (True, "101"), 2: (False, "90"), 3: (False, "")}
    last = {1: (False, "101"), 2: (False, "102"), 3: (True, "103")}  # 101 ended, 102 came and went, 103 runs
    assert beside((0,), first, last) == Beside("0", cells=3, gpus=3)


def test_a_cell_alone_and_a_pair_on_two_gpus_count_once():
    idle = {1: (False, "7"), 2: (False, ""), 3: (False, "")}
    assert beside((0,), idle, idle) == Beside("0", 0, 0)
    pair = {2: (True, "55"), 3: (True, "55")}
    assert beside((0, 1), pair, pair) == Beside("0,1", cells=1, gpus=2)


def test_the_fields_round_trip_through_the_results_env_and_old_results_have_none():
    found = Beside("2,3", 1, 2)
    assert found.to_env() == {"gpu_ids": "2,3", "cells_beside": 1, "gpus_beside": 2}
    assert Beside.from_env(found.to_env() | {"torch": "2.5"}) == found
    assert Beside.from_env({"torch": "2.5"}) is None


def test_a_look_sees_a_held_gpu_and_the_job_recorded_in_its_file(tmp_path):
    locks = {g: tmp_path / f"gpu-{g}.lock" for g in range(3)}
    locks[1].write_text("4242")
    env = {BESIDE_ENV: json.dumps({"mine": [0], "gpus": [0], "locks": {g: str(p) for g, p in locks.items()}})}
    with open(locks[1]) as held:
        fcntl.flock(held, fcntl.LOCK_SH)
        assert look(env) == {1: (True, "4242"), 2: (False, "")}, "gpu 2's file not made yet: free"
    assert look(env) == {1: (False, "4242"), 2: (False, "")}
    assert look({}) is None
