"""What a verdict compared, side by side: each side's per-repeat values and the cells they come
from (an answer's ok runs). `submit --settle` sizes and adds repeats from them (collect.settle)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Sides:
    a_values: tuple[float, ...]  # the base's per-repeat values, as the verdict read them
    b_values: tuple[float, ...]  # the other side's
    a_cells: tuple[str, ...]  # the base's ok runs' cell ids (empty: its table kept none)
    b_cells: tuple[str, ...]
