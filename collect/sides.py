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


# What a verdict's field compares, in the direction its answer words it: the record field's name -> (words,
# inverted). A ratio of times b / a inverted is a speedup a / b (the answers' T1/TN, "7.43x faster").
COMPARED = {"speedups": ("speedup T1/TN", True), "runs": ("speedup T1/TN", True),
            "trend": ("speedup of the larger batch", True), "plateau_verdict": ("speedup of the larger batch", True),
            "settled_step": ("speedup of the larger batch", True),
            "splits": ("TN against T1/N", False), "strongs": ("1-GPU time at the global batch against the batch per GPU",
                                                              False), "peaks": ("busbw against the size before", False)}


def compared(field: str, judged: object) -> tuple[str, bool]:
    """The words for a verdict's field ("speedups.0.verdict" -> "speedup T1/TN") and whether its ratio is
    printed inverted; a difference is in accuracy points; another field, its path in words, counted from 1.
    One home for the direction: the answers, their details and `submit --settle`'s lines print a comparison
    the same way round."""
    if not hasattr(judged, "ratio"):  # a Difference (collect.verdict imports this module: no isinstance here)
        return "accuracy difference in points", False
    name = field.split(".")[0]
    if name in COMPARED:
        return COMPARED[name]
    return " ".join(str(int(p) + 1) if p.isdigit() else p.replace("_", " ") for p in field.split(".")), False
