"""A PTQ study's result files as flat rows (pandas), read from their JSON: one row per cell, per
(cell, variant), per (cell, variant, layer) for the notebook's scales, and per (cell, layer) for
the weight and activation statistics with their histograms (those of the cell shown per setup:
the others are not kept while the files are read, `keep`).

Reads the "ptq" findings as plain JSON (jobs.ptq.result's to_dict shape) with no torch, so
collect stays light; strict JSON's "NaN" and "Infinity" strings become numbers again. Cells that
differ only in seed and repeat are one setup (a configuration); the repeats are its training seeds.
"""
from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

import pandas as pd

from collect.cells import KindCell
from jobs.core.atomic import NON_FINITE
from jobs.core.layout import result_path
from jobs.ptq.cell import PTQCell
from jobs.ptq.result import Histogram, PTQFindings, TensorStats
from jobs.core.result import Result, ResultError, read_result

SEED_FIELDS = ("seed", "repeat")  # what repeats of one setup differ in
SPEC_FIELDS = ("weight_bits", "activation_bits", "granularity", "weight_method", "activation_method",
               "calibration_images", "percentile", "bias")
STAT_FIELDS = ("values", "min", "max", "mean", "std", "sigma3_low", "sigma3_high")
CELL_COLUMNS = ["cell_id", "setup", "training_seed", "status", "error", "dataset", "train_images", "test_images",
                "epochs", "train_s", "bias_train_s", "loss", "bias_loss", "reused"]
VARIANT_COLUMNS = (["cell_id", "setup", "training_seed", "order", "name", "role", "model", "baseline", "accuracy",
                    "loss", "images", "delta", "dtype", "input_scale", "quantized"] + list(SPEC_FIELDS)
                   + ["int_images", "prediction_mismatches", "logit_mismatches", "accumulator", "checked_layers",
                      "checked_values", "non_integer", "out_of_range"])
SCALE_COLUMNS = ["cell_id", "setup", "training_seed", "order", "variant", "layer", "weight_scale_min",
                 "weight_scale_max", "input_scale", "output_scale", "multiplier_min", "multiplier_max",
                 "bias_scale_min", "bias_scale_max", "activation_range", "channels"]
CODE_COLUMNS = ["cell_id", "setup", "training_seed", "stands_for", "function", "source"]
STATS_COLUMNS = (["cell_id", "setup", "training_seed", "layer"] + list(STAT_FIELDS)
                 + ["bits", "method", "calibration_images", "range", "scale", "kl_divergence", "edges", "counts"])


@dataclass(frozen=True)
class PTQRows:
    cells: pd.DataFrame  # every ptq cell of the study, any status
    variants: pd.DataFrame  # each ok cell's variants
    scales: pd.DataFrame  # each ok cell's notebook variants, per layer
    weights: pd.DataFrame  # each ok cell's Net weights per layer (the notebook's spec)
    activations: pd.DataFrame  # each ok cell's Net input and layer outputs (the notebook's calibration)
    code: pd.DataFrame = dataclasses.field(default_factory=lambda: pd.DataFrame(columns=CODE_COLUMNS))  # the
    # functions that ran (jobs.ptq.listing), of each setup's shown cell: with_shown reads them


def representative(rows: PTQRows) -> pd.DataFrame:
    """Per setup, the ok cell whose per-layer figures are shown: the lowest training seed."""
    ok = rows.cells[rows.cells.status == "ok"]
    ok = ok[ok.cell_id.isin(set(rows.variants.cell_id))]
    return ok.sort_values("training_seed").drop_duplicates("setup")[["setup", "cell_id", "training_seed"]]


NO_HISTOGRAM = Histogram((), ())


def keep(result: Result) -> Result:
    """The result as the PTQ tables keep it while every file is read (collect.kinds.KindTables.keep):
    without its histograms and its code, which only the one cell per setup whose layers are shown
    needs (with_shown reads them again from its file). A study of 2,000 results would hold them all."""
    body = result.body
    if not isinstance(body, PTQFindings):
        return result
    outcome = body.outcome
    bare = dataclasses.replace(
        outcome, weight_stats=tuple(dataclasses.replace(w, stats=_bare(w.stats)) for w in outcome.weight_stats),
        activation_stats=tuple(dataclasses.replace(a, stats=_bare(a.stats)) for a in outcome.activation_stats))
    return dataclasses.replace(result, body=dataclasses.replace(body, outcome=bare, code=()))


def _bare(stats: TensorStats) -> TensorStats:
    return dataclasses.replace(stats, histogram=NO_HISTOGRAM)


def with_shown(rows: PTQRows, results_dir: Optional[Path]) -> PTQRows:
    """The rows with the histograms and the code of each setup's shown cell (representative), read
    again from its result file (the others' were not kept: `keep`)."""
    shown = representative(rows)
    if not len(shown) or results_dir is None:
        return rows
    weights: dict[tuple[str, str], tuple[tuple, tuple]] = {}
    activations: dict[tuple[str, str], tuple[tuple, tuple]] = {}
    code: list[dict[str, Any]] = []
    for cell_id, setup, seed in zip(shown.cell_id, shown.setup, shown.training_seed, strict=True):
        body = read_result(result_path(results_dir, cell_id)).body
        if not isinstance(body, PTQFindings):
            raise ResultError(f"result file {cell_id}.json changed while collect read it: no ptq findings now; "
                              "run collect again")
        weights.update(_histograms(cell_id, [w.stats for w in body.outcome.weight_stats]))
        activations.update(_histograms(cell_id, [a.stats for a in body.outcome.activation_stats]))
        code += [dict(cell_id=cell_id, setup=setup, training_seed=seed, stands_for=c.stands_for, function=c.function,
                      source=c.source) for c in body.code]
    return dataclasses.replace(rows, weights=_filled(rows.weights, weights),
                               activations=_filled(rows.activations, activations),
                               code=pd.DataFrame(code, columns=CODE_COLUMNS))


def _histograms(cell_id: str, stats: list[TensorStats]) -> dict[tuple[str, str], tuple[tuple, tuple]]:
    """(cell, layer) -> the layer's histogram edges and counts, as the rows hold them."""
    return {(cell_id, s.name): (tuple(map(number, s.histogram.edges)), tuple(map(int, s.histogram.counts)))
            for s in stats}


def _filled(stats: pd.DataFrame, found: dict[tuple[str, str], tuple[tuple, tuple]]) -> pd.DataFrame:
    """Each row's edges and counts where `found` has its (cell, layer)."""
    keys = list(zip(stats.cell_id, stats.layer, strict=True))
    edges = [found[k][0] if k in found else e for k, e in zip(keys, stats.edges, strict=True)]
    counts = [found[k][1] if k in found else c for k, c in zip(keys, stats.counts, strict=True)]
    return stats.assign(edges=pd.Series(edges, index=stats.index, dtype=object),
                        counts=pd.Series(counts, index=stats.index, dtype=object))


def number(value: Any) -> float:
    """A JSON number, or one of strict JSON's strings for NaN and the infinities; None is NaN."""
    if value is None:
        return math.nan
    return float(NON_FINITE.get(value, value) if isinstance(value, str) else value)


def setups(cells: tuple[KindCell, ...]) -> dict[str, str]:
    """Each cell's setup name: the fields, other than seed and repeat, that differ between the
    study's cells ("dataset=synthetic, test_images=300"), "" when every cell is one setup."""
    fields = [{k: v for k, v in c.cell.items() if k not in SEED_FIELDS and k != "kind"} for c in cells]
    names = sorted({k for f in fields for k in f})
    varying = [k for k in names if len({json.dumps(f.get(k), sort_keys=True) for f in fields}) > 1]
    return {c.cell_id: ", ".join(f"{k}={_text(f.get(k))}" for k in varying) for c, f in zip(cells, fields, strict=True)}


def _text(value: Any) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def ptq_rows(cells: tuple[KindCell, ...]) -> PTQRows:
    """Every ptq cell's rows; an ok result without findings raises ResultError naming it (their types
    and ranges were checked when the file was read: jobs.ptq.result.PTQFindings)."""
    names = setups(cells)
    out: dict[str, list[dict[str, Any]]] = {k: [] for k in ("cells", "variants", "scales", "weights", "activations")}
    for c in cells:
        base = dict(cell_id=c.cell_id, setup=names[c.cell_id], training_seed=_seed(c))
        ptq = c.kept.body.to_dict() if c.kept is not None and c.kept.body is not None else None
        try:
            if c.status == "ok" and ptq is None:
                raise ValueError("an ok result without them")
            out["cells"].append(_cell_row(c, base, ptq))
            if c.status == "ok" and ptq is not None:
                _outcome_rows(out, base, ptq["outcome"])
        except (KeyError, TypeError, ValueError, IndexError) as exc:
            raise ResultError(f"result file {c.cell_id}.json: its ptq findings are unreadable ({exc!r}); "
                              "move it aside and rerun `submit` to redo that cell") from exc
    return PTQRows(pd.DataFrame(out["cells"], columns=CELL_COLUMNS),
                   pd.DataFrame(out["variants"], columns=VARIANT_COLUMNS),
                   pd.DataFrame(out["scales"], columns=SCALE_COLUMNS),
                   pd.DataFrame(out["weights"], columns=STATS_COLUMNS),
                   pd.DataFrame(out["activations"], columns=STATS_COLUMNS))


def _seed(c: KindCell) -> int:
    """The seed the cell's networks trained with: its result's run_seed; seed + repeat for a result
    written before run_seed (so two cells that trained one seed count once); a cell with no result
    yet will train with PTQCell.training_seed (its fields were checked when read)."""
    if c.kept is None:
        return PTQCell.from_dict(c.cell).training_seed
    if c.kept.run_seed is None:
        return int(c.cell.get("seed", 0)) + int(c.cell.get("repeat", 0))
    return c.kept.run_seed


def _cell_row(c: KindCell, base: dict[str, Any], ptq: Optional[dict[str, Any]]) -> dict[str, Any]:
    error = c.kept.error if c.kept is not None else None
    row = dict(base, status=c.status, error=error.strip().splitlines()[-1] if error else None,
               **{k: c.cell.get(k) for k in ("dataset", "train_images", "test_images", "epochs")})
    training = {t["model"]: t for t in (ptq or {}).get("training", [])}
    for prefix, model in (("", "Net"), ("bias_", "NetWithBias")):
        t = training.get(model)
        if t is not None:
            row[f"{prefix}train_s"] = number(t["train_s"])
            row[f"{prefix}loss"] = number(t["epoch_losses"][-1]) if t["epoch_losses"] else math.nan
    row["reused"] = any(t["reused"] for t in training.values()) if training else None
    return row


def _outcome_rows(out: dict[str, list[dict[str, Any]]], base: dict[str, Any], outcome: dict[str, Any]) -> None:
    for order, v in enumerate(outcome["variants"]):
        out["variants"].append(_variant_row(base, order, v))
        if v["role"] == "notebook":
            out["scales"] += [_scale_row(base, order, v["name"], s) for s in v["scales"]]
    notebook = outcome["config"]["notebook"]
    for w in outcome["weight_stats"]:
        out["weights"].append(_stats_row(base, w, notebook["weight_method"], None, w["kl_divergence"]))
    for a in outcome["activation_stats"]:
        out["activations"].append(_stats_row(base, a, notebook["activation_method"], notebook["calibration_images"]))


def _variant_row(base: dict[str, Any], order: int, v: dict[str, Any]) -> dict[str, Any]:
    spec = v["spec"] or {}
    agreement = v["integer_agreement"] or {}
    checks = v["integer_checks"]
    return dict(
        base, order=order, name=v["name"], role=v["role"], model=v["model"], baseline=v["baseline"],
        accuracy=number(v["accuracy"]), loss=number(v["loss"]), images=v["images"], delta=number(v["delta_accuracy"]),
        dtype=v["dtype"], input_scale=number(v["input_scale"]), quantized=bool(v["spec"]),
        **{k: spec.get(k) for k in SPEC_FIELDS},
        int_images=agreement.get("images"), prediction_mismatches=agreement.get("prediction_mismatches"),
        logit_mismatches=agreement.get("logit_mismatches"), accumulator=agreement.get("accumulator"),
        checked_layers=len(checks), checked_values=sum(c["values"] for c in checks),
        non_integer=sum(c["non_integer"] for c in checks), out_of_range=sum(c["out_of_range"] for c in checks))


def _span(values: Optional[list[Any]]) -> tuple[float, float]:
    if not values:
        return math.nan, math.nan
    numbers = [number(v) for v in values]
    return min(numbers), max(numbers)


def _scale_row(base: dict[str, Any], order: int, variant: str, s: dict[str, Any]) -> dict[str, Any]:
    (w_lo, w_hi), (m_lo, m_hi), (b_lo, b_hi) = (_span(s[k]) for k in ("weight_scale", "multiplier", "bias_scale"))
    return dict(base, order=order, variant=variant, layer=s["name"], weight_scale_min=w_lo, weight_scale_max=w_hi,
                input_scale=number(s["input_scale"]), output_scale=number(s["output_scale"]),
                multiplier_min=m_lo, multiplier_max=m_hi, bias_scale_min=b_lo, bias_scale_max=b_hi,
                activation_range=number(s["activation_range"]), channels=len(s["weight_scale"]))


def _stats_row(base: dict[str, Any], layer: dict[str, Any], method: str, calibration: Optional[int],
               kl: Any = None) -> dict[str, Any]:
    stats = layer["stats"]
    return dict(base, layer=stats["name"], **{k: number(stats[k]) for k in STAT_FIELDS},
                bits=layer["bits"], method=method, calibration_images=calibration, range=number(layer["range"]),
                scale=number(layer["scale"]), kl_divergence=number(kl),
                edges=tuple(number(e) for e in stats["histogram"]["edges"]),
                counts=tuple(int(n) for n in stats["histogram"]["counts"]))
