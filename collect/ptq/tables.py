"""The PTQ study's tables as pure functions over its rows (collect.ptq.rows).

Each setup's repeats are its training seeds; a figure over seeds is the median over the ok
cells, a paired delta their mean (its paired t interval's centre), each with min and max (the
spread), and `repeats` = the seeds it has, `runs` = the setup's cells of any status. A delta is
taken within one seed (a variant against the float network of the same training), then
summarised over seeds. The per-layer tables (scales, statistics) show one seed: the lowest ok
training seed of each setup.
"""
from __future__ import annotations

import statistics
from typing import Optional

import pandas as pd

from collect.ptq.rows import SPEC_FIELDS, PTQRows, representative
from collect.repeats import setup_runs
from collect.verdict import paired
from jobs.ptq.choices import GRANULARITIES, RANGE_METHODS

POINTS = 100.0  # an accuracy difference in 0..1 units, in percentage points
RANGED = ("accuracy", "delta")
THRESHOLD_POINTS = 1.0  # the paired verdicts' practical threshold on an accuracy difference, in points
RULE = (f"{THRESHOLD_POINTS:g}-point threshold (collect.verdict, paired by seed): higher or lower when the mean of the "
        f"seeds' paired differences is beyond {THRESHOLD_POINTS:g} point and their 95% interval excludes 0; within "
        f"{THRESHOLD_POINTS:g} point when that interval lies inside -{THRESHOLD_POINTS:g}..+{THRESHOLD_POINTS:g}; "
        "else unsettled")
INTERVAL = ("[low, high] = the 95% interval of the mean paired difference that the word is read from, a paired t "
            "interval (collect.verdict.paired): mean -+ q s / sqrt(n), s the paired differences' standard deviation, q the t "
            "quantile at 97.5% with n - 1 degrees of freedom (2 for 3 seeds: 4.30)")


def paired_comparisons(pairs: pd.DataFrame) -> int:
    """The paired table's comparisons that get a word (2+ seeds): the family its per-cell intervals come in."""
    return int((pairs.repeats >= 2).sum()) if len(pairs) else 0


def per_comparison(comparisons: int) -> str:
    """Said where the sweep's words are read (TA8 17): each interval is its cell's own, so over many cells a few
    exclude 0 by chance alone (1 in 20 of those where the methods do not differ)."""
    return (f"each 95% interval is per comparison, not family-wise: of the table's {comparisons:,} paired comparisons "
            f"up to 1 in 20 ({comparisons / 20:.1f} of them) may be said higher or lower by chance alone")


CHECKS_ONLY = "other variants with quantized activations (inputs checked only)"
METHOD_TEXT = {"max": "max", "3sigma": "3 sigma", "mse": "MSE-optimal"}


def over_seeds(variants: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """Per group of `keys`: accuracy = the median over its ok seeds, delta = their mean (the paired t interval's
    centre: collect.verdict.paired), each with <v>_min, <v>_max
    (and accuracy_values, delta_values: each seed's, for collect.verdict; not in the CSV);
    loss = median; repeats = seeds; order = the first position among the cell's variants.
    Example: accuracies 0.50, 0.54, 0.52 -> 0.52 (0.50-0.54), repeats 3; deltas 0.01, 0.01, 0.04 -> 0.02."""
    groups = variants.groupby(keys, sort=False, dropna=False)
    stats = [groups[["accuracy", "loss"]].median(), groups["delta"].mean(), groups[list(RANGED)].min().add_suffix("_min"),
             groups[list(RANGED)].max().add_suffix("_max"),
             groups[["accuracy", "delta"]].agg(lambda column: tuple(column.dropna())).add_suffix("_values"),
             groups.training_seed.nunique().rename("repeats"),
             groups.order.min()]
    return pd.concat(stats, axis=1).reset_index()


def with_interval(table: pd.DataFrame) -> pd.DataFrame:
    """delta_low, delta_high: the interval (INTERVAL) of collect.verdict.paired over each row's seeds' deltas, in 0..1
    units, the one the answers' words are read from (NaN for a baseline or one seed)."""
    ends = [(v.low / POINTS, v.high / POINTS) if len(d) >= 2 and (v := paired([POINTS * x for x in d], THRESHOLD_POINTS))
            else (float("nan"), float("nan")) for d in table.delta_values]
    return table.assign(delta_low=[e[0] for e in ends], delta_high=[e[1] for e in ends])


def notebook_table(rows: PTQRows) -> pd.DataFrame:
    """The notebook's six variants (Net float, W8, W8A8; NetWithBias float, W8 with the bias
    float, W8A8B32) per setup, in the notebook's order:
        accuracy = median over seeds s of acc_s (min-max);
        delta = mean over s of (acc_s(variant) - acc_s(its model's float network)), in 0..1 units, with its
        interval delta_low..delta_high (with_interval);
        repeats = the seeds with the variant; runs, ok = the setup's cells, and those ok."""
    notebook = rows.variants[rows.variants.role == "notebook"]
    table = over_seeds(notebook, ["setup", "name", "model", "baseline", "quantized", *SPEC_FIELDS])
    table = with_interval(table).merge(setup_runs(rows.cells), on="setup", how="left")
    return table.sort_values(["setup", "order"], kind="stable").reset_index(drop=True)


def integer_table(rows: PTQRows) -> pd.DataFrame:
    """Each variant that ran integer-only, summed over its ok seeds: images compared, prediction
    mismatches (images whose top-1 class differs between the integer run and the float
    simulation), logit mismatches (images with any logit integer different), and the checks on
    its quantized layers' inputs: values checked, non-integer, out of range. The variants with
    quantized activations that only had their inputs checked are summed in one row (`checks_only`
    of them). accumulator and dtype: the integer run's accumulator and the simulation's float type."""
    v = rows.variants[rows.variants.int_images.notna() | (rows.variants.checked_layers > 0)]
    columns = ["setup", "name", "order", "variants", "repeats", "images", "prediction_mismatches",
               "logit_mismatches", "accumulator", "dtype", "checked_values", "non_integer", "out_of_range"]
    if v.empty:
        return pd.DataFrame(columns=columns)
    checks_only = v.int_images.isna()
    v = v.assign(variant=v.name, name=v.name.where(~checks_only, CHECKS_ONLY))
    groups = v.groupby(["setup", "name"], sort=False)
    sums = groups[["int_images", "prediction_mismatches", "logit_mismatches", "checked_values", "non_integer",
                   "out_of_range"]].sum(min_count=1)
    table = pd.concat([sums.rename(columns={"int_images": "images"}), groups.order.min(),
                       groups.variant.nunique().rename("variants"), groups.training_seed.nunique().rename("repeats"),
                       groups.accumulator.agg(_distinct), groups.dtype.agg(_distinct)], axis=1).reset_index()
    return table.sort_values(["setup", "order"], kind="stable").reset_index(drop=True)[columns]


def _distinct(values: pd.Series) -> str:
    return ", ".join(sorted({str(x) for x in values.dropna()}))


def _shown(table: pd.DataFrame, rows: PTQRows) -> pd.DataFrame:
    return table[table.cell_id.isin(set(representative(rows).cell_id))].reset_index(drop=True)


def scales_table(rows: PTQRows) -> pd.DataFrame:
    """The scales of the notebook's variants with quantized activations (W8A8, W8A8B32) or a float bias
    (W8 float-bias), per layer, of one seed (representative): n_w (min and max over channels: equal per
    tensor), C_{k-1}, C_k, the multiplier n_out_k, the bias scale S_k = n_w C_{k-1} and the range r_k."""
    v = rows.variants
    with_activations = v[(v.role == "notebook") & v.quantized.astype(bool) & (v.activation_bits.notna() | (v.bias == "float"))]
    keys = set(zip(with_activations.cell_id, with_activations.name, strict=True))
    wanted = pd.Series([k in keys for k in zip(rows.scales.cell_id, rows.scales.variant, strict=True)],
                       index=rows.scales.index, dtype=bool)  # a mask even when empty: [] would select no columns
    scales = rows.scales[wanted]
    return _shown(scales, rows).sort_values(["setup", "order"], kind="stable").reset_index(drop=True)


def stats_table(stats: pd.DataFrame, rows: PTQRows) -> pd.DataFrame:
    """One seed's per-layer statistics (weights or activations), with `wider` = whether the 3 sigma
    range reaches beyond the largest magnitude: max(|mean - 3 std|, |mean + 3 std|) > max(|min|, |max|)."""
    table = _shown(stats, rows).drop(columns=["edges", "counts"])
    sigma = table[["sigma3_low", "sigma3_high"]].abs().max(axis=1)
    table["wider"] = sigma > table[["min", "max"]].abs().max(axis=1)
    return table


def histograms(rows: PTQRows) -> pd.DataFrame:
    """The histograms of the shown seed: which ("weights" or "activations"), layer, edges, counts,
    with the layer's min, max, 3 sigma range and chosen clip range (for the plots)."""
    keep = ["setup", "training_seed", "layer", "min", "max", "sigma3_low", "sigma3_high", "range", "method",
            "edges", "counts"]
    parts = [_shown(rows.weights, rows)[keep].assign(which="weights"),
             _shown(rows.activations, rows)[keep].assign(which="activations")]
    return pd.concat(parts, ignore_index=True)


def method_text(method: str, percentile: Optional[float]) -> str:
    return f"percentile {percentile:g}" if method == "percentile" else METHOD_TEXT.get(method, method)


def sweep_table(rows: PTQRows) -> pd.DataFrame:
    """The sweep's variants over seeds (over_seeds), each in its part: "weights" (activations
    float; bits = weight bits; choice = granularity, range method) or "activations" (8-bit
    weights; bits = activation bits; choice = range method, calibration images). Rows are
    ordered by part, choice (granularity, then method as in the sweep), bits descending."""
    sweep = rows.variants[rows.variants.role == "sweep"]
    keys = ["setup", "name", "weight_bits", "activation_bits", "granularity", "weight_method", "activation_method",
            "calibration_images", "percentile"]
    table = over_seeds(sweep, keys)
    weights = table.activation_bits.isna()
    table["part"] = weights.map({True: "weights", False: "activations"})
    table["bits"] = table.weight_bits.where(weights, table.activation_bits).astype("Int64")
    table["choice"] = [_choice(r) for r in table.itertuples(index=False)]
    table["_rank"] = [_rank(r) for r in table.itertuples(index=False)]
    table = table.sort_values(["setup", "_rank", "bits"], ascending=[True, True, False], kind="stable")
    return table.drop(columns="_rank").reset_index(drop=True)


def clipping_table(rows: PTQRows) -> pd.DataFrame:
    """Each range method of the activation sweep against max |x| at the same calibration and bits, paired
    by seed: delta = mean over seeds s of (acc_s(method) - acc_s(max)), in 0..1 units, with delta_min,
    delta_max and each seed's (delta_values, for collect.verdict); repeats = the seeds paired; outcome, direction and
    the interval delta_low..delta_high (INTERVAL; NaN for one seed) = collect.verdict.paired over those differences
    in points (THRESHOLD_POINTS). The float
    network cancels: this is the difference of the two methods' deltas of the same seed.
    Example: seeds 0, 1, 2 with MSE at 0.66, 0.60, 0.65 and max at 0.63, 0.58, 0.63 -> +0.0233 (+0.02 to +0.03)."""
    columns = ["setup", "choice", "activation_method", "percentile", "calibration_images", "bits", "delta",
               "delta_min", "delta_max", "delta_low", "delta_high", "delta_values", "repeats", "outcome", "direction"]
    v = rows.variants
    acts = v[(v.role == "sweep") & v.activation_bits.notna() & v.accuracy.notna()]
    keys = ["setup", "training_seed", "calibration_images", "activation_bits"]
    top = acts[acts.activation_method == "max"][keys + ["accuracy"]].rename(columns={"accuracy": "max_accuracy"})
    pairs = acts[acts.activation_method != "max"].merge(top, on=keys)
    if pairs.empty:
        return pd.DataFrame(columns=columns)
    pairs = pairs.assign(paired=pairs.accuracy - pairs.max_accuracy)
    out = []
    for (setup, method, percentile, calibration, bits), g in pairs.groupby(
            ["setup", "activation_method", "percentile", "calibration_images", "activation_bits"], sort=False, dropna=False):
        values = tuple(float(x) for x in g.sort_values("training_seed").paired)
        verdict = paired([POINTS * x for x in values], THRESHOLD_POINTS)
        out.append(dict(setup=setup, choice=f"{method_text(str(method), percentile)}, {int(calibration)} images",
                        activation_method=method, percentile=percentile, calibration_images=int(calibration),
                        bits=int(bits), delta=statistics.fmean(values), delta_min=min(values), delta_max=max(values),
                        delta_low=verdict.low / POINTS, delta_high=verdict.high / POINTS, delta_values=values,
                        repeats=len(values), outcome=verdict.outcome, direction=verdict.direction))
    table = pd.DataFrame(out, columns=columns)
    table["_rank"] = [(_index(RANGE_METHODS, m), n) for m, n in zip(table.activation_method, table.calibration_images,
                                                                    strict=True)]
    table = table.sort_values(["setup", "_rank", "bits"], ascending=[True, True, False], kind="stable")
    return table.drop(columns="_rank").reset_index(drop=True)


def _choice(r) -> str:
    if pd.isna(r.activation_bits):
        return f"{r.granularity}, {method_text(r.weight_method, r.percentile)}"
    return f"{method_text(r.activation_method, r.percentile)}, {int(r.calibration_images)} images"


def _rank(r) -> tuple:
    """Weights before activations; the sweep's own order of granularities and methods."""
    if pd.isna(r.activation_bits):
        return (0, _index(GRANULARITIES, r.granularity), _index(RANGE_METHODS, r.weight_method), 0)
    return (1, 0, _index(RANGE_METHODS, r.activation_method), int(r.calibration_images))


def _index(choices: tuple[str, ...], value: str) -> int:
    return choices.index(value) if value in choices else len(choices)


def build(rows: PTQRows) -> dict[str, pd.DataFrame]:
    """Every PTQ table by key (the keys of collect.kinds' ptq entry)."""
    return {
        "ptq_cells": rows.cells, "ptq_runs": setup_runs(rows.cells), "ptq_notebook": notebook_table(rows),
        "ptq_integer": integer_table(rows),
        "ptq_scales": scales_table(rows), "ptq_weights": stats_table(rows.weights, rows),
        "ptq_activations": stats_table(rows.activations, rows), "ptq_sweep": sweep_table(rows),
        "ptq_clipping": clipping_table(rows),
        "ptq_histograms": histograms(rows), "ptq_code": rows.code,
    }
