"""The PTQ study's tables, grids and plots (Part B: the notebook's LeNet quantized)."""
from __future__ import annotations

from collections.abc import Mapping
from typing import Optional

from collect.kinds import KindTables, Tables
from collect.ptq import compare, grids, rows, tables
from collect.ptq.questions import QUESTIONS


def _plots(built: Tables) -> Mapping[str, Optional[bytes]]:
    from collect.ptq import plots  # matplotlib: only for the report

    return plots.build(built)


KIND = KindTables(
    "ptq", "Quantization study", "post-training quantization of the notebook's LeNet (Part B)",
    lambda loaded, view: tables.build(rows.with_shown(rows.ptq_rows(loaded.of_kind("ptq")), loaded.results_dir)),
    grids.build,
    ("ptq_notebook", "ptq_integer", "ptq_scales", "ptq_weights", "ptq_activations", "ptq_sweep", "ptq_clipping",
     "ptq_cells"),
    _plots,
    {"ptq_weights": "ptq_weight_histograms", "ptq_activations": "ptq_activation_histograms",
     "ptq_sweep_activations": "ptq_accuracy_vs_bits"},
    questions=QUESTIONS, runs=compare.runs, keep=rows.keep,
)
