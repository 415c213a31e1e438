"""Where a job's wall time goes: its phases, in wall-clock seconds, recorded in every result.

    launch_s + start_s + setup_s + body_s + write_s

is the time from the scheduler (or the local queue) starting the task to the job's end
(env.ended_at). What follows ended_at is in no phase: the result file's own write (a file cannot
hold the time of its own write), the process group's end and the interpreter's exit.
A PhaseClock gives every second between the job's first line and its end to exactly one
phase, so the phases add up by construction; start_s is read from the OS and launch_s from
the launcher. Torch-free: collect and status read it too.
"""
from __future__ import annotations

import dataclasses
import os
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

# Unix seconds at which the task was started: the local queue, `python -m jobs` and the sbatch script set it.
LAUNCHED_AT_ENV = "JOB_LAUNCHED_AT"
# SLURM >= 23.02 sets it in a job (whole unix seconds: launch_s may be up to 1 s too long there).
SLURM_START_ENV = "SLURM_JOB_START_TIME"

MAX_PHASE_S = 366 * 24 * 3600  # no job runs a year: a phase beyond is a hand-edited or damaged file
BODY_PARTS = ("epochs", "eval", "measure")  # a kind's parts of its body (training's); the rest is body_s's own
PHASES = ("setup", "body", "write") + BODY_PARTS


@dataclass
class Phases:
    """A job's wall time by phase (seconds); the parts are a kind's breakdown of body_s."""

    start_s: Optional[float]  # this process's start -> the job's first line: interpreter, imports (None: not known)
    setup_s: float  # device, environment, process group; a kind's own (data, model, the batch's fit)
    body_s: float  # the kind's work, its parts included
    write_s: float  # checkpoints
    launch_s: Optional[float] = None  # the scheduler started the task -> this process started (None: not told)
    epochs_s: Optional[float] = None  # training: the epochs (part of body_s)
    eval_s: Optional[float] = None  # training: the test set after each epoch (part of body_s)
    measure_s: Optional[float] = None  # training: all-reduce probe, exposed-communication windows (part of body_s)
    # cells this process ran before this one (a packed task): 0, this job paid the process's start and set-up;
    # 1+, start_s counts from the cell before's end and set-up reused what that one built (jobs.runtime.reuse);
    # None: not told (results before packing). Not a time: total_s leaves it out.
    cells_before: Optional[int] = None

    def total_s(self) -> float:
        """The job's wall time: from the task's start (or this process's, or the first line) to its end."""
        return sum(v or 0.0 for v in (self.launch_s, self.start_s, self.setup_s, self.body_s, self.write_s))

    def outside_epochs_s(self) -> float:
        """Everything that is not an epoch: what the job costs beyond the training it is for."""
        return self.total_s() - (self.epochs_s or 0.0)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: Any) -> Phases:
        """From the result JSON; every field a number of seconds (or null where it may be), 0 to
        MAX_PHASE_S: a huge one (1e308, an int of 400 digits) would overflow every sum made of it."""
        if not isinstance(data, dict):
            raise TypeError(f"phases must be an object, got {data!r}")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise TypeError(f"phases.{unknown[0]} is not a phase (phases are {sorted(names)})")
        optional = {"start_s", "launch_s", "epochs_s", "eval_s", "measure_s", "cells_before"}
        for name in names:
            value = data.get(name)
            if value is None and name in optional:
                continue
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not 0 <= value <= MAX_PHASE_S:
                raise TypeError(f"phases.{name} must be a number of seconds, 0 to {MAX_PHASE_S} (a year)"
                                f"{', or null' if name in optional else ''}, got {_short(value)}")
        count = data.get("cells_before")
        if count is not None and count != int(count):
            raise TypeError(f"phases.cells_before must be a whole number of cells, or null, got {count!r}")
        return cls(**{**data, "cells_before": None if count is None else int(count)})


def _short(value: Any) -> str:
    """A value as the message shows it: a huge int (10**400) by its size, not its digits."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**20:
        return f"an int of {value.bit_length()} bits"
    return repr(value)


class PhaseClock:
    """Gives every second from its start to exactly one phase, the current one (PHASES)."""

    def __init__(self, phase: str = "setup", now: Callable[[], float] = time.perf_counter) -> None:
        self._now = now
        self._seconds = dict.fromkeys(PHASES, 0.0)
        self._entered = {phase}
        self._check(phase)
        self.current = phase
        self._since = now()

    def _check(self, phase: str) -> None:
        if phase not in self._seconds:
            raise ValueError(f"phase must be one of {list(PHASES)}, got {phase!r}")

    def switch(self, phase: str) -> None:
        """From now on, time is `phase`'s."""
        self._check(phase)
        now = self._now()
        self._seconds[self.current] += now - self._since
        self.current, self._since = phase, now
        self._entered.add(phase)

    @contextmanager
    def phase(self, phase: str) -> Iterator[None]:
        """The time inside is `phase`'s; after it, the phase before it goes on."""
        before = self.current
        self.switch(phase)
        try:
            yield
        finally:
            self.switch(before)

    def phases(self, start_s: Optional[float], launch_s: Optional[float]) -> Phases:
        """The phases so far (the current one up to now); the body's parts where the body entered any."""
        self.switch(self.current)
        s, parts = self._seconds, bool(self._entered & set(BODY_PARTS))
        return Phases(start_s=start_s, setup_s=s["setup"], body_s=s["body"] + sum(s[p] for p in BODY_PARTS),
                      write_s=s["write"], launch_s=launch_s, epochs_s=s["epochs"] if parts else None,
                      eval_s=s["eval"] if parts else None, measure_s=s["measure"] if parts else None)


def process_age_s() -> Optional[float]:
    """Seconds since this process started (Linux: /proc/self/stat), or None where that is not
    known. Both clocks count from boot, in the kernel's ticks (10 ms)."""
    try:
        fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
        started = int(fields[19]) / os.sysconf("SC_CLK_TCK")  # field 22, starttime; fields[0] is field 3
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - started)
    except (OSError, ValueError, IndexError, AttributeError):
        return None


def launched_at(env: Mapping[str, str]) -> Optional[float]:
    """When the task was started (unix seconds): the launcher's word, else SLURM's; None if neither says."""
    for name in (LAUNCHED_AT_ENV, SLURM_START_ENV):
        try:
            return float(env[name])
        except (KeyError, ValueError):
            continue
    return None


def launch_s(process_started: float, env: Mapping[str, str]) -> Optional[float]:
    """Seconds from the task's start (launched_at) to this process's start (unix seconds)."""
    at = launched_at(env)
    return None if at is None else max(0.0, process_started - at)
