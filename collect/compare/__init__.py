"""`collect --compare`: two result sets side by side.

Set A is the baseline (the dir given to --compare), set B the results dir collect reads; every
ratio is B / A. The steps, one module each: runs (each cell as a Run, with the figures its kind
compares, read through the kind's own rows), pairing (configurations matched by their fields,
ignoring those the user names), table (a Row per configuration and metric, with the verdict of
collect.verdict, and the Comparison that holds them), environment (what each set ran on), render
(console, CSV, JSON, Markdown) and plot (the ratios as PNG).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from collect.compare.environment import environment
from collect.compare.pairing import pair
from collect.compare.runs import measured
from collect.compare.table import Comparison, rows
from collect.load import load


def compare_dirs(a_dir: Path, b_dir: Path, ignore: Sequence[str] = (), threshold: float = 0.05,
                 confidence: float = 0.95) -> Comparison:
    """Set B (b_dir) against set A (a_dir): every configuration of either, paired by its fields
    (those in `ignore` left out). UnknownField for a field to ignore that neither set has; a corrupt
    result file raises collect.load's ResultError naming it."""
    loaded_a, loaded_b = load(Path(a_dir)), load(Path(b_dir))
    runs_a, runs_b = measured(loaded_a), measured(loaded_b)
    paired = pair(runs_a.runs, runs_b.runs, ignore)
    metrics = {**runs_a.metrics, **runs_b.metrics}
    return Comparison(str(a_dir), str(b_dir), environment(loaded_a.envelopes, loaded_b.envelopes),
                      rows(paired.pairs, metrics, threshold, confidence), threshold, confidence, paired.notes)
