"""The PTQ tables (collect.ptq.tables) laid out for people as Grids: the notebook's sequence,
the integer-only check, the scales and statistics per layer, and the sweep by bits."""
from __future__ import annotations

import math
from typing import Any, Optional

import pandas as pd

from collect.render import Grid, number, percent, signed, status_text
from collect.repeats import ranged
from collect.view import Shown, DEFAULT_VIEW, View, shown
from collect.ptq.comparison import interval
from collect.ptq.tables import INTERVAL, POINTS, RULE, THRESHOLD_POINTS, paired_comparisons, per_comparison
from collect.verdict import BEYOND, EQUIVALENT

SPREAD = ("accuracy = the median over training seeds (the cells' repeats), min-max beside it; * marks a spread "
          "(max - min) / median above 5%: a difference smaller than the spread is noise")
QUANT = ("q = clamp(round(x n), -2^(b-1), 2^(b-1) - 1) with scale n = qmax / r, qmax = 2^(b-1) - 1, r the clipping "
         "range; with r = max|x| (the notebook's) x n spans -qmax..qmax: -127..127 at 8 bits, -128 unused")
RANGES = ("ranges: max r = max|x|; 3 sigma r = |mean| + 3 std; percentile p: r = the p-th percentile of |x|; "
          "MSE-optimal: the r among max|x| i / 100 (i = 1..100) that minimises mean((q / n - x)^2)")


def sig(value: Any, digits: int = 4) -> str:
    """Four significant digits (scales span 1e-4 to 1e5), whole numbers from 10,000 up to a billion, powers of
    ten beyond (a weights-only network's product of weight scales: 2.117e+13); "-" when missing."""
    if value is None or pd.isna(value):
        return "-"
    return f"{value:,.0f}" if 1e4 <= abs(value) < 1e9 else f"{value:.{digits}g}"


def span(low: float, high: float) -> str:
    """One number when equal (per tensor), "low to high" over channels otherwise."""
    if pd.isna(low):
        return "-"
    return sig(low) if math.isclose(low, high, rel_tol=1e-9) else f"{sig(low)} to {sig(high)} (per channel)"


def points(value: float) -> str:
    """A 0..1 difference in percentage points, signed."""
    return "-" if pd.isna(value) else signed(100 * value, 2)


def delta_text(row) -> str:
    """The delta in percentage points: "mean (min to max) [low, high]" over seeds, the interval its word is read
    from in brackets (TA5 7: INTERVAL); no * mark: a delta near 0 has no meaningful relative spread."""
    if row.repeats < 2:
        return points(row.delta)
    spread = f"({points(row.delta_min)} to {points(row.delta_max)})"
    return f"{points(row.delta)} {spread} {interval(row.delta_low, row.delta_high, POINTS)}"


def named(name: str, setup: str) -> str:
    return f"{name} [{setup}]" if setup else name


def data_text(cells: pd.DataFrame) -> str:
    """"synthetic, 1000 training / 300 test images, 2 epochs" (each value that differs listed)."""
    parts = [", ".join(sorted({str(v) for v in cells[c].dropna()})) or "?" for c in
             ("dataset", "train_images", "test_images", "epochs")]
    return f"{parts[0]}, {parts[1]} training / {parts[2]} test images, {parts[3]} epochs"


def seeds_text(runs: pd.DataFrame) -> str:
    """"3 of 4 cells ok (1 failed)" per setup."""
    texts = [f"{int(r.ok)} of {int(r.runs)} cells ok" + (f" ({r.others})" if r.others else "")
             + (f" [{r.setup}]" if r.setup else "") for r in runs.itertuples(index=False)]
    return "; ".join(texts) or "no cells"


def quantized_text(r: Any) -> str:
    """What a notebook variant quantizes, from its spec: "weights 8-bit; activations float"."""
    if not r.quantized:
        return "nothing (float)"
    acts = "activations float" if pd.isna(r.activation_bits) else f"input and activations {int(r.activation_bits)}-bit"
    bias = "" if r.model != "NetWithBias" else "; bias int32" if r.bias == "int32" else "; bias float"
    return f"weights {int(r.weight_bits)}-bit; {acts}{bias}"


def notebook_grid(table: pd.DataFrame, cells: pd.DataFrame, runs: pd.DataFrame, spec: str) -> Grid:
    header = ["variant", "quantized", "accuracy", "accuracy - own float (points)", "test loss", "seeds"]
    rows = []
    for r in table.itertuples(index=False):
        accuracy = ranged(r, "accuracy", lambda v: percent(v, 2))
        delta = "baseline" if not r.quantized else delta_text(r)
        rows.append([named(r.name, r.setup), quantized_text(r), accuracy, delta, number(r.loss, 3),
                     f"{r.repeats} of {r.runs}"])
    caption = (f"Units: top-1 test accuracy (%); deltas in percentage points. Data: {data_text(cells)}. "
               f"Seeds: {seeds_text(runs)}.")
    formulas = [SPREAD, "accuracy - own float = the mean over seeds of (the variant's accuracy - the float "
                "accuracy of the same model trained with the same seed), min to max beside it", INTERVAL,
                f"the notebook's choices: {spec}", RULE.replace("higher or lower", "lower or higher than float")
                .replace("within", "not distinguishable: within").replace("else unsettled", "else not clearly different"),
                "W8: weights quantized, activations float; W8A8: the input and every layer output quantized too, "
                "the integers never turned back to float between layers (scales C_k carried along); "
                "NetWithBias: fc3 has a bias; float-bias: the trained bias added to the integer sum as is; "
                "B32: the bias as int32 at scale n_w C_{k-1}", QUANT]
    return Grid("ptq_notebook", "Part B: the notebook's quantization steps, each against its own float network",
                caption, header, rows, formulas, "" if rows else f"No PTQ result yet: {seeds_text(runs)}.",
                text_columns=(0, 1))


def integer_grid(table: pd.DataFrame) -> Grid:
    header = ["variant", "seeds", "test images compared", "predictions that differ", "logits that differ",
              "accumulator", "simulation dtype", "layer inputs checked", "non-integer", "out of range"]
    rows = []
    for r in table.itertuples(index=False):
        ran = not pd.isna(r.images)
        name = named(r.name if ran else f"{r.variants} {r.name}", r.setup)
        rows.append([name, str(r.repeats), _count(r.images), _count(r.prediction_mismatches),
                     _count(r.logit_mismatches), r.accumulator or "-", r.dtype or "-", _count(r.checked_values),
                     _count(r.non_integer), _count(r.out_of_range)])
    formulas = ["integer-only: integer input, weights and activations, each layer an integer matrix product "
                "(int8 x int8 into int32 for 8-bit operands, int64 wider), the int32 bias added, then the rescale "
                "y = clamp(round(acc n_out)); the float simulation computes the same integers in float32 "
                "(exact below 2^24) or float64",
                "predictions that differ: test images whose top-1 class differs; logits that differ: images with any "
                "output integer different (summed over seeds)",
                "layer inputs checked: every value entering a quantized layer, in every test image: it must be an "
                "integer in [-2^(b-1), 2^(b-1) - 1]"]
    return Grid("ptq_integer", "Integer-only check: the quantized network in integer arithmetic vs the float simulation",
                integer_verdict(table), header, rows, formulas,
                "" if rows else "No variant ran integer-only, and none quantized its activations.",
                text_columns=(0, 5, 6))


def integer_verdict(table: pd.DataFrame) -> str:
    """The caption: "0 of N differ" said plainly, with why when not 0."""
    ran = table[table.images.notna()]
    if ran.empty:
        return "No variant ran integer-only."
    images, differ = int(ran.images.sum()), int(ran.prediction_mismatches.sum())
    bad = int(table.non_integer.sum() + table.out_of_range.sum())
    text = (f"Integer-only run vs the float simulation's predictions: {differ:,} of {images:,} test images differ "
            f"({len(ran)} variants, all seeds). Quantized layer inputs: {bad:,} of {int(table.checked_values.sum()):,} "
            "not an integer in range.")
    if differ:
        text += (" Not 0: see the accumulator and dtype columns: int32 sums of 8-bit operands cannot overflow here "
                 "and a float32 simulation is exact below 2^24, so with both exact a difference is a bug.")
    return text


def _count(value: Any) -> str:
    return "-" if value is None or pd.isna(value) else f"{int(value):,}"


def one_seed(table: pd.DataFrame) -> str:
    pairs = sorted({(str(r.setup), int(r.training_seed), str(r.cell_id)) for r in table.itertuples(index=False)})
    return "; ".join(f"training seed {seed} (cell {cell})" + (f" [{setup}]" if setup else "")
                     for setup, seed, cell in pairs) or "no ok cell"


def scales_grid(table: pd.DataFrame) -> Grid:
    header = ["variant", "layer", "weight scale n_w", "input scale C_{k-1}", "output scale C_k", "multiplier n_out",
              "bias scale n_w C_{k-1}", "activation range r_k"]
    rows = [[named(r.variant, r.setup), r.layer, span(r.weight_scale_min, r.weight_scale_max), sig(r.input_scale),
             sig(r.output_scale), span(r.multiplier_min, r.multiplier_max),
             span(r.bias_scale_min, r.bias_scale_max), sig(r.activation_range)] for r in table.itertuples(index=False)]
    formulas = ["scales multiply: a real value x is held as the integer round(x scale)",
                "C_0 = n_in = qmax / r_input; the layer's sum has scale S_k = n_w C_{k-1} (the int32 bias's scale)",
                "n_out_k = qmax / (r_k S_k), so C_k = S_k n_out_k = qmax / r_k: each layer's integers carry every "
                "earlier scale",
                "W8 float-bias: activations float (n_out 1), so C_k is the product of every weight scale so far, and "
                "the trained bias, added as is to a sum of scale n_w C_{k-1}, acts divided by that scale", QUANT]
    return Grid("ptq_scales", "Scales per layer of the notebook's W8A8, W8A8B32 and W8 float-bias",
                f"One seed: {one_seed(table)}. Bias scale only where the layer has a bias (NetWithBias's fc3).",
                header, rows, formulas, "" if rows else "No ok PTQ result yet.", text_columns=(0, 1))


def stats_grid(table: pd.DataFrame, which: str) -> Grid:
    weights = which == "weights"
    header = ["layer" if weights else "tensor", "values", "min", "max", "mean", "std", "mean - 3 std", "mean + 3 std",
              "3 sigma vs max|x|", "clip range r", "scale"] + (["KL divergence"] if weights else [])
    rows = []
    for r in table.itertuples(index=False):
        line = [r.layer, _count(r.values), sig(r.min), sig(r.max), sig(r.mean), sig(r.std), sig(r.sigma3_low),
                sig(r.sigma3_high), "wider" if r.wider else "narrower",
                f"{sig(r.range)} ({r.method})" if not pd.isna(r.range) else "-", sig(r.scale)]
        rows.append(line + ([sig(r.kl_divergence)] if weights else []))
    formulas = ["3 sigma vs max|x|: wider when |mean| + 3 std > max|x| (the 3 sigma range reaches beyond every value)",
                RANGES, QUANT]
    if weights:
        title = "Weights per layer (Net): range, 3 sigma range, clip range and scale, KL divergence"
        caption = f"Net's weights, quantized as the notebook does (bits {_distinct(table.bits)}). One seed: {one_seed(table)}."
        formulas.append("KL divergence = sum_i p_i ln(p_i / q_i) (nats) between the histograms of the weights (P) "
                        "and of the dequantized weights (Q)")
    else:
        title = "Activations per layer (Net): the input and each layer's output, with their ranges"
        calibration = _distinct(table.calibration_images)
        caption = (f"Profiled on {calibration} training images ({notebook_seen(calibration)}); conv1 and conv2 after "
                   f"ReLU and pool, fc1 and fc2 after ReLU, fc3 its logits. One seed: {one_seed(table)}.")
        formulas.append("scale = C_k = qmax / r_k, the scale the layer's output integers carry")
    return Grid(f"ptq_{which}", title, caption, header, rows, formulas, "" if rows else "No ok PTQ result yet.",
                text_columns=(0, 8, 9))


NOTEBOOK_ASKS, NOTEBOOK_SEES, NOTEBOOK_BATCH = 400, 404, 4  # test(net, trainloader, max_samples=400) breaks
# only once past 400: 101 batches of 4 images
# why the study calibrates on the count the notebook asks for, said wherever the 404 is (TA7 13)
COUNT_ASKED = (f"the {NOTEBOOK_ASKS} asked is used: the {NOTEBOOK_SEES - NOTEBOOK_ASKS} more are its loop overshooting "
               f"by one batch of {NOTEBOOK_BATCH}, a count that moves with the batch size")
LOOP_SEES = f"the notebook's loop sees {NOTEBOOK_SEES}; {COUNT_ASKED}"


def notebook_seen(calibration: str) -> str:
    """How a profile of `calibration` images stands to the notebook's, said as the notebook does it."""
    loop = (f"test(net, trainloader, max_samples={NOTEBOOK_ASKS}) stops only once past {NOTEBOOK_ASKS}, so it sees "
            f"{NOTEBOOK_SEES}: 101 batches of 4")
    if calibration == str(NOTEBOOK_SEES):
        return "as the notebook's loop: " + loop
    if calibration == str(NOTEBOOK_ASKS):
        return f"the notebook asks for as many, but its {loop}; {COUNT_ASKED}"
    return "the notebook's " + loop


def _distinct(values: pd.Series) -> str:
    return ", ".join(sorted({str(int(v)) for v in values.dropna()})) or "-"


def sweep_grid(table: pd.DataFrame, notebook: pd.DataFrame, part: str) -> Grid:
    rows_of = table[table.part == part]
    bits = sorted({int(b) for b in rows_of.bits}, reverse=True)
    weights = part == "weights"
    first = "weights only: granularity, range" if weights else "activations: range, calibration"
    header = [first] + [f"{b} bits" for b in bits] + ["seeds"]
    rows = []
    for (setup, choice), group in rows_of.groupby(["setup", "choice"], sort=False):
        by_bits = {int(r.bits): r for r in group.itertuples(index=False)}
        cells = [ranged(by_bits[b], "accuracy", lambda v: percent(v, 2)) if b in by_bits else "-" for b in bits]
        rows.append([named(choice, setup)] + cells + [str(int(group.repeats.max()))])
    what = ("Net with its weights quantized (bits by column), activations float" if weights else
            "Net with 8-bit weights (per tensor, max) and its input and layer outputs quantized (bits by column)")
    caption = f"Units: top-1 test accuracy (%). {what}. Float Net: {float_accuracy(notebook)}."
    formulas = [SPREAD, RANGES, QUANT]
    if weights:
        formulas.append("per tensor: one scale n_w per layer; per channel: one per output channel")
    else:
        formulas.append("calibration: the activation ranges come from the first N of a seeded permutation of the "
                        "training images")
    key, title = (("ptq_sweep_weights", "Sweep: weights only, accuracy by weight bits") if weights else
                  ("ptq_sweep_activations", "Sweep: 8-bit weights, accuracy by activation bits"))
    return Grid(key, title, caption, header, rows, formulas, "" if rows else f"No {part} sweep in this study.")


VERDICT_WORD = {(BEYOND, 1): "higher", (BEYOND, -1): "lower", (EQUIVALENT, 0): f"within {THRESHOLD_POINTS:g} point"}


def clipping_grid(table: pd.DataFrame) -> Grid:
    """The paired table (collect.ptq.tables.clipping_table): each method against max |x|, bits by column, each
    cell "mean (min to max)" of the seeds' paired differences in points, and the paired verdict's word."""
    bits = sorted({int(b) for b in table.bits}, reverse=True)
    header = ["activations: range, calibration, against max |x|"] + [f"{b} bits" for b in bits] + ["seeds"]
    rows = []
    for (setup, choice), group in table.groupby(["setup", "choice"], sort=False):
        by_bits = {int(r.bits): r for r in group.itertuples(index=False)}
        rows.append([named(choice, setup)] + [_paired_cell(by_bits[b]) if b in by_bits else "-" for b in bits]
                    + [str(int(group.repeats.max()))])
    formulas = ["paired difference = the mean over seeds of (the method's accuracy - max |x|'s accuracy, same seed, "
                "calibration and bits), in points, min to max over the seeds beside it; the float network cancels",
                INTERVAL,
                RULE.replace("higher or lower", "higher or lower than max |x|") + ": no word"
                + (f"; {per_comparison(n)}" if (n := paired_comparisons(table)) > 1 else "")]
    return Grid("ptq_clipping", "Sweep: each range method against max |x|, paired by seed (8-bit weights, activations "
                "quantized)", "Units: percentage points of top-1 test accuracy; the word is the paired verdict's.",
                header, rows, formulas, "" if rows else "No range method but max |x| in the activation sweep.")


def _paired_cell(r: Any) -> str:
    text = delta_text(r)
    word = VERDICT_WORD.get((r.outcome, int(r.direction)), "")
    return f"{text} {word}".strip()


def float_accuracy(notebook: pd.DataFrame) -> str:
    base = notebook[(notebook.model == "Net") & ~notebook.quantized.astype(bool)]
    texts = [ranged(r, "accuracy", lambda v: percent(v, 2)) + (f" [{r.setup}]" if r.setup else "")
             for r in base.itertuples(index=False)]
    return "; ".join(texts) or "-"


def cells_grid(cells: pd.DataFrame) -> Grid:
    header = ["cell", "training seed", "status", "data", "train time Net / NetWithBias (s)",
              "last epoch's loss Net / NetWithBias", "networks"]
    rows = []
    for r in cells.sort_values(["setup", "training_seed"], kind="stable").itertuples(index=False):
        status = status_text(r.status) + (f": {r.error}" if isinstance(r.error, str) and r.error else "")
        ran = r.status == "ok" and not pd.isna(r.train_s)
        rows.append([named(r.cell_id, r.setup), str(r.training_seed), status,
                     f"{r.dataset} {r.train_images} / {r.test_images}",
                     f"{r.train_s:.1f} / {r.bias_train_s:.1f}" if ran else "",
                     f"{sig(r.loss)} / {sig(r.bias_loss)}" if ran else "",
                     ("reused" if r.reused else "trained") if ran else ""])
    return Grid("ptq_cells", "PTQ runs: one trained pair of networks (Net, NetWithBias) per training seed",
                f"Cells: {len(cells)}; training seed = the cell's seed for repeat 0, else drawn from (seed, repeat) "
                "by a hash: every repeat trains on its own seed (a result written before: seed + repeat).",
                header, rows,
                ["reused: trained by an earlier run with the same training fields, loaded from nets/",
                 "data: dataset, training images / test images"],
                "" if rows else "No PTQ cells.", text_columns=(0, 2, 3, 6))


def notebook_spec(notebook: pd.DataFrame) -> str:
    """The notebook's choices, from its W8A8 variant: "8-bit weights (per tensor, max), 8-bit
    activations (max, 400 calibration images)"."""
    w8a8 = notebook[notebook.activation_bits.notna()]
    if w8a8.empty:
        return "-"
    s = w8a8.iloc[0]
    return (f"{int(s.weight_bits)}-bit weights (per {s.granularity}, {s.weight_method}), "
            f"{int(s.activation_bits)}-bit activations ({s.activation_method}, {int(s.calibration_images)} "
            f"calibration images; {LOOP_SEES}), bias int32")


def build(built: dict[str, pd.DataFrame], view: View = DEFAULT_VIEW) -> tuple[Grid, ...]:
    """Every PTQ grid, in the report's order, of at most view.rows lines (collect.view.shown):
    cells; setups (their variants, layers); the sweep's choices (their bits side by side)."""
    notebook, sweep = built["ptq_notebook"], built["ptq_sweep"]

    def cut(key: str, what: str = "setups", by: tuple[str, ...] = ("setup",), table: Optional[pd.DataFrame] = None) -> Shown:
        return shown(built[key] if table is None else table, f"{key}.csv", view.rows, what, list(by) or None)

    cells = cut("ptq_cells", "cells", ())
    variants, integer, scales = cut("ptq_notebook"), cut("ptq_integer"), cut("ptq_scales")
    weights, activations = cut("ptq_weights"), cut("ptq_activations")
    swept = {part: cut("ptq_sweep", "choices", ("setup", "choice"), sweep[sweep.part == part])
             for part in ("weights", "activations")}
    pairs = cut("ptq_clipping", "choices", ("setup", "choice"))
    return (
        cells.noted(cells_grid(cells.table)),
        variants.noted(notebook_grid(variants.table, built["ptq_cells"], built["ptq_runs"], notebook_spec(notebook))),
        integer.noted(integer_grid(integer.table)),
        scales.noted(scales_grid(scales.table)),
        weights.noted(stats_grid(weights.table, "weights")),
        activations.noted(stats_grid(activations.table, "activations")),
        *(swept[part].noted(sweep_grid(swept[part].table, notebook, part)) for part in ("weights", "activations")),
        pairs.noted(clipping_grid(pairs.table)),
    )
