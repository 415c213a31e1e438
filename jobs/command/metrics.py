"""The metrics a user's script writes: one JSON object per line, each value a finite number, in
the file ORCHESTRATOR_METRICS names. Read and checked here (pure, no torch): a line that is not
such an object is refused naming its number, so a wrong number never reaches a table."""
from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

MAX_LINES = 10_000  # an epoch a line: far more than any study needs
MAX_KEYS = 64  # metrics in one line
KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]{0,63}")
EPOCH = "epoch"  # the key timed_epoch selects a line by

Line = dict[str, float]


class MetricsError(ValueError):
    """A metrics file or line that cannot be used; the message names the line."""


def check_line(data: Any, where: str) -> Line:
    """One line's metrics: a JSON object of at most MAX_KEYS finite numbers (true is not a number),
    its keys letters, digits and _.- (a table's column names them)."""
    if not isinstance(data, dict):
        raise MetricsError(f"{where} is not a JSON object of numbers, e.g. {{\"epoch\": 1, \"epoch_s\": 9.8}}")
    if len(data) > MAX_KEYS:
        raise MetricsError(f"{where} holds {len(data)} metrics: at most {MAX_KEYS}")
    line: Line = {}
    for key, value in data.items():
        if not isinstance(key, str) or not KEY.fullmatch(key):
            raise MetricsError(f"{where}: metric name {key!r:.80} must be letters, digits and _.- "
                               "(at most 64, the first a letter or _)")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
            raise MetricsError(f"{where}: {key} = {value!r:.80} is not a finite number")
        line[key] = float(value)
    return line


def parse_metrics(text: str) -> tuple[Line, ...]:
    """Every line of a metrics file (blank lines skipped); MetricsError naming the first bad line
    ("metrics line 3: ..."), or saying there is none."""
    lines = []
    for number, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        where = f"metrics line {number}"
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError):
            raise MetricsError(f"{where} is not JSON: {raw.strip()!r:.80}") from None
        lines.append(check_line(data, where))
        if len(lines) > MAX_LINES:
            raise MetricsError(f"more than {MAX_LINES:,} metrics lines: write one line per epoch")
    if not lines:
        raise MetricsError("the script wrote no metrics: append one JSON object per epoch to the file "
                           "$ORCHESTRATOR_METRICS names")
    return tuple(lines)


def timed_index(lines: Sequence[Mapping[str, float]], timed_epoch: int) -> int:
    """The timed line's index: the last line for timed_epoch = -1, else the last line whose "epoch"
    is timed_epoch; MetricsError saying which epochs there are when none is."""
    if timed_epoch < 0:
        return len(lines) - 1
    found = [i for i, line in enumerate(lines) if line.get(EPOCH) == timed_epoch]
    if not found:
        epochs = sorted({line[EPOCH] for line in lines if EPOCH in line})
        have = ", ".join(f"{e:g}" for e in epochs[:20]) or "none (no line has an \"epoch\")"
        raise MetricsError(f"no metrics line has epoch = {timed_epoch} (the study's timed_epoch); epochs: {have}")
    return found[-1]
