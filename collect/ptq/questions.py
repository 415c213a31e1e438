"""Part B's questions (the notebook's Q1-Q5) as records and paragraphs, from the PTQ tables: the
weights' and activations' ranges against their 3-sigma ranges and which to quantize with, and each
quantized network's accuracy against its float network over the training seeds (collect.verdict)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from enum import StrEnum
from typing import Optional

import pandas as pd

from collect.details import record_details
from collect.evidence import Evidence, Measured, listing
from collect.ptq.checks import (Clipping, IntegerRun, PercentileIsMax, SweepChoice, clipping, integer_runs,
                                percentile_is_max, sweep_choices)
from collect.ptq.sweep_text import clipping_text, percentile_text
from collect.ptq.comparison import RULE_SENTENCE, Accuracy, accuracy, compared, pct
from collect.ptq.tables import POINTS, THRESHOLD_POINTS
from collect.ptq.grids import sig
from collect.questions import Question, Record, Tables, Words, one_run_note, says
from collect.render import Listing
from collect.verdict import BEYOND, Difference, paired
from jobs.core.synthetic import SYNTHETIC_IMAGES


class PartB(StrEnum):
    Q1 = "B.Q1"
    Q2 = "B.Q2"
    Q3 = "B.Q3"
    Q4 = "B.Q4"
    Q5 = "B.Q5"


SYNTHETIC = f"the data is synthetic ({SYNTHETIC_IMAGES}), not CIFAR-10"
DATASETS = {"synthetic": f"synthetic ({SYNTHETIC_IMAGES})", "cifar10": "CIFAR-10"}
SATURATED = 0.99  # a float network's median test accuracy from which no quantization loss can show


def saturated(a: Optional[Accuracy]) -> bool:
    """The float network the variant is held against is at SATURATED or above: the task is too easy for a
    quantization effect to show, and "not distinguishable" says nothing of the scheme."""
    return a is not None and a.base_accuracy.value >= SATURATED


@dataclass(frozen=True)
class Coarse:
    """The sweep's lowest accuracy, where its seeds' paired drop against the float network is beyond 1 point:
    proof that a quantization effect can show on this data."""

    part: str  # "weights" | "activations"
    bits: int
    choice: str
    accuracy: Measured
    row: Evidence


def coarse_drop(tables: Tables) -> Optional[Coarse]:
    sweep = tables["ptq_sweep"].reset_index(drop=True)
    rows = [r for r in sweep.itertuples() if not pd.isna(r.accuracy) and not pd.isna(r.delta)]
    if not rows:
        return None
    r = min(rows, key=lambda r: float(r.accuracy))
    verdict = paired([POINTS * d for d in (r.delta_values or (r.delta,))], THRESHOLD_POINTS)
    if not (verdict.outcome == BEYOND and verdict.direction < 0):
        return None
    return Coarse(str(r.part), int(r.bits), str(r.choice), Measured.of(r, "accuracy"),
                  Evidence("ptq_sweep", int(r.Index), str(r.name)))


def saturated_text(a: Accuracy, coarse: Optional[Coarse]) -> str:
    shows = (f"; effects do show where quantization is coarse: with the {coarse.part} at {coarse.bits} bits "
             f"({coarse.choice}) {'the sweep below' if coarse.part == 'weights' else 'the sweep of B.Q4'} falls to "
             f"{pct(coarse.accuracy)}" if coarse else "")
    return (f" The float network reaches {pct(a.base_accuracy)}: at 8 bits no difference is resolvable on this "
            f"near-saturated synthetic task{shows}; the notebook's CIFAR-10 losses cannot be reproduced on this data.")


def datasets(tables: Tables) -> tuple[str, ...]:
    """The data sets the study's cells ran on (their `dataset` field), in order."""
    return tuple(sorted({str(d) for d in tables["ptq_cells"].dataset.dropna()}))


def dataset_text(names: tuple[str, ...]) -> str:
    """Which data set ran, from the cells: "the data is CIFAR-10", or synthetic, said as not CIFAR-10."""
    if names == ("synthetic",):
        return SYNTHETIC
    return "the data is " + " and ".join(DATASETS.get(n, n) for n in names) if names else ""


def _notes(tables: Tables, *verdicts: Optional[Difference]) -> str:
    cells = tables["ptq_cells"]
    parts = [t for t in (dataset_text(datasets(tables)),) if t]
    missing = cells[cells.status != "ok"]
    if len(missing):
        parts.append(f"{len(missing)} of {len(cells)} seeds have no result ("
                     + ", ".join(f"{n} {s}" for s, n in missing.status.value_counts().items()) + ")")
    parts += one_run_note(*verdicts)
    return (" Note: " + "; ".join(parts) + ".") if parts else ""


@dataclass(frozen=True)
class Ranges(Record):
    what: str  # "weights" | "activations"
    setup: str
    seed: int
    layers: tuple[str, ...]
    wider: tuple[str, ...]  # layers whose 3-sigma range is wider than the actual range
    narrower: tuple[str, ...]
    extremes: tuple[tuple[str, float, float, float, float], ...]  # layer, min, max, 3-sigma low, high
    never_negative: tuple[str, ...] = ()  # activations whose min is >= 0 (after a ReLU): signed codes waste half
    # end by end (mean - 3 std against min, mean + 3 std against max): wider at both ends, narrower at both,
    # wider only below, wider only above
    both_wider: tuple[str, ...] = ()
    both_narrower: tuple[str, ...] = ()
    wider_below: tuple[str, ...] = ()
    wider_above: tuple[str, ...] = ()
    clipping: Optional[Clipping] = None  # activations: what the sweep says of clipping the tail against max |x|


def _ranges(tables: Tables, key: str, what: str) -> Optional[Ranges]:
    stats = tables[key].reset_index(drop=True)
    if not len(stats):
        return None
    first = stats[(stats.setup == stats.setup.iloc[0]) & (stats.training_seed == stats.training_seed.iloc[0])]
    rows = list(first.itertuples())
    below = {r.layer: float(r.sigma3_low) < float(r.min) for r in rows}
    above = {r.layer: float(r.sigma3_high) > float(r.max) for r in rows}
    ends: dict[tuple[bool, bool], list[str]] = {(True, True): [], (False, False): [], (True, False): [], (False, True): []}
    for r in rows:
        ends[below[r.layer], above[r.layer]].append(r.layer)
    clipped, swept = _clipping(tables) if what == "activations" else (None, ())
    return Ranges(tuple(Evidence(key, int(r.Index), f"{r.layer}, seed {r.training_seed}") for r in rows) + swept, (), what,
                  str(rows[0].setup), int(rows[0].training_seed), tuple(r.layer for r in rows),
                  tuple(r.layer for r in rows if r.wider), tuple(r.layer for r in rows if not r.wider),
                  tuple((r.layer, float(r.min), float(r.max), float(r.sigma3_low), float(r.sigma3_high)) for r in rows),
                  tuple(r.layer for r in rows if what == "activations" and float(r.min) >= 0),
                  both_wider=tuple(ends[True, True]), both_narrower=tuple(ends[False, False]),
                  wider_below=tuple(ends[True, False]), wider_above=tuple(ends[False, True]), clipping=clipped)


def _clipping(tables: Tables) -> tuple[Optional[Clipping], tuple[Evidence, ...]]:
    """The sweep's verdict on clipping, at the calibration and bits of the notebook's W8A8."""
    nb = tables["ptq_notebook"]
    rows = nb[(nb.name == "Net W8A8") & nb.activation_bits.notna() & nb.calibration_images.notna()]
    if not len(rows):
        return None, ()
    return clipping(tables["ptq_clipping"], tables["ptq_sweep"], int(rows.calibration_images.iloc[0]),
                    int(rows.activation_bits.iloc[0]))


def ranges_text(a: Ranges) -> str:
    spans = "; ".join(f"{layer} [{lo:.3g}, {hi:.3g}] (3 sigma [{s_lo:.3g}, {s_hi:.3g}])"
                      for layer, lo, hi, s_lo, s_hi in a.extremes)
    text = f"The {a.what}' range and 3-sigma range (mean +- 3 std), per layer (training seed {a.seed}): {spans}."
    ends = [f"reaches past both in {listing(a.both_wider, 6)} (it would waste codes there)" if a.both_wider else "",
            f"falls short of both in {listing(a.both_narrower, 6)} (it would clip both tails)" if a.both_narrower else "",
            f"reaches below the minimum but stops short of the maximum in {listing(a.wider_below, 6)}"
            if a.wider_below else "",
            f"stops short of the minimum but reaches above the maximum in {listing(a.wider_above, 6)}"
            if a.wider_above else ""]
    text += (" Taking each end on its own (mean - 3 std against the minimum, mean + 3 std against the maximum), the "
             "3-sigma range " + "; ".join(e for e in ends if e) + ".")
    sym = [f"wider than max |x| in {listing(a.wider, 6)} (codes wasted)" if a.wider else "",
           f"narrower in {listing(a.narrower, 6)} (it would clip the largest values, which the long tail holds)"
           if a.narrower else ""]
    text += (" A symmetric quantizer uses one range r for both signs, so it compares r = |mean| + 3 std with "
             "max |x|: " + "; ".join(x for x in sym if x) + ".")
    text += (" We quantize with the actual range (max |x|)" + (", as the notebook does" if a.what == "activations" else "")
             + ": symmetric, per tensor, scale 127 / max |x|, so the codes span -127..127 (-128 is never reached)."
             + (clipping_text(a.clipping) if a.what == "activations" else ""))
    if a.never_negative:
        text += (f" {listing(a.never_negative, 6).capitalize()} are never negative (after a ReLU): their signed "
                 "codes use only 0..127, so half of the 255 codes are wasted (one bit of resolution); unsigned "
                 "codes 0..255 would halve the step.")
    return text


# The notebook's functions each question asks to write (B.Q2, B.Q4, B.Q5), as jobs.ptq.listing names them.
ASKED_CODE = {PartB.Q2: ("quantized_weights",), PartB.Q4: ("quantize_initial_input", "quantize_activations", "forward"),
              PartB.Q5: ("quantized_bias",)}


def handed_in(tables: Tables, question: PartB) -> tuple[Listing, ...]:
    """The functions that ran for the question's notebook functions, from the first setup's shown cell
    (the result file's recorded source: collect never imports the job's code)."""
    code = tables["ptq_code"]
    if not len(code):
        return ()
    code = code[(code.setup == code.setup.iloc[0]) & code.stands_for.isin(ASKED_CODE[question])]
    return tuple(Listing(r.stands_for, r.function, r.source) for r in code.itertuples(index=False))


@dataclass(frozen=True)
class Quantized(Record):
    main: Optional[Accuracy]
    notes: str
    sweep: tuple[SweepChoice, ...] = ()  # the sweep's choices of this part (weights: Q2, activations: Q4)
    integer: tuple[IntegerRun, ...] = ()  # Q4: the integer-only runs against the float simulation
    code: tuple[Listing, ...] = ()  # the functions that ran, as the question asks to hand them in
    saturated: bool = False  # the float network at SATURATED or above (collect.ptq.questions.saturated)
    coarse: Optional[Coarse] = None  # the sweep's measured drop, where the float is saturated (an effect can show)
    calibration: Optional[int] = None  # the images the variant's activation ranges were calibrated on (its table row)
    datasets: tuple[str, ...] = ()  # the data sets the cells ran on (the note names them)
    percentile_max: Optional[PercentileIsMax] = None  # Q2: why the sweep's per-channel percentile rows are its max rows


def _quantized(tables: Tables, variant: str, base: str, question: PartB) -> Optional[Quantized]:
    a = accuracy(tables, variant, base)
    if a is None and not len(tables["ptq_notebook"]):
        return None
    coarse = coarse_drop(tables) if saturated(a) else None
    return Quantized((a.evidence if a else ()) + ((coarse.row,) if coarse else ()), () if a else (f"no {variant} result",),
                     a, _notes(tables, a.verdict if a else None), code=handed_in(tables, question),
                     saturated=saturated(a), coarse=coarse, calibration=_calibration(tables, variant),
                     datasets=datasets(tables))


def _calibration(tables: Tables, variant: str) -> Optional[int]:
    """The calibration images of the variant's notebook row, where it quantizes activations."""
    nb = tables["ptq_notebook"]
    rows = nb[(nb.name == variant) & nb.activation_bits.notna() & nb.calibration_images.notna()]
    return int(rows.calibration_images.iloc[0]) if len(rows) else None


def with_checks(q: Optional[Quantized], tables: Tables, part: str, integer: bool) -> Optional[Quantized]:
    """The answer with what it rests on beyond the notebook (collect.ptq.checks), for its details."""
    if q is None:
        return None
    sweep, swept = sweep_choices(tables["ptq_sweep"], part)
    runs, ran = integer_runs(tables["ptq_integer"]) if integer else ((), ())
    same, why = (percentile_is_max(tables["ptq_sweep"], tables["ptq_weights"], tables["ptq_scales"]) if part == "weights"
                 else (None, ()))
    return dataclasses.replace(q, evidence=tuple(dict.fromkeys(q.evidence + swept + ran + why)), sweep=sweep,
                               integer=runs, percentile_max=same)


def q2_text(q: Quantized) -> str:
    if q.main is None:
        return "No seed quantized the weights yet." + q.notes
    a = q.main
    lower = says(a.verdict, Words("lower", "-", "-", "-")) == "lower"
    why = (", because a few large weights set each layer's scale and leave the rest few levels" if lower else
           "" if q.saturated else
           ", because 255 levels over each layer's range leave a rounding error far below the weights' spread")
    return (f"With the weights quantized to 8 bits (per tensor, symmetric, scale 127 / max |w|: codes -127..127) and "
            f"the activations left in float, the network's test accuracy is {compared(a, why)}"
            + (saturated_text(a, q.coarse) if q.saturated else "") + RULE_SENTENCE + percentile_text(q.percentile_max)
            + q.notes)


def q4_text(q: Quantized) -> str:
    if q.main is None:
        return "No seed quantized the activations yet." + q.notes
    a = q.main
    return (equations(q.calibration) + " With the weights and every layer's input and output quantized to 8 bits, the "
            f"network's test accuracy is {compared(a, ' (saturated: see B.Q2)' if q.saturated else '')}" + RULE_SENTENCE
            + q.notes)


def equations(calibration: Optional[int]) -> str:
    """Q4.1's scaled outputs, in the notebook's names (n_W: a layer's weight scale, n_In: the input's, n_Out: the
    output scale each layer multiplies by), and each n_Out from the ranges calibrated on `calibration` images."""
    images = f"the {calibration:,} calibration images" if calibration else "the calibration images"
    return ("Scaled, conv1 computes n_W1 W1 (*) n_In In, and its output scale gives n_W1 W1 (*) n_In In x n_Out1 = "
            "n_W1 n_In n_Out1 Out1; conv2 takes those integers as its input: n_W2 W2 (*) (n_W1 n_In n_Out1 Out1) x "
            "n_Out2 = n_W2 n_W1 n_In n_Out1 n_Out2 Out2; each later layer multiplies in its own n_W and n_Out. "
            f"With r_In and r_k the ranges calibrated on the input and on layer k's output (max |x| over {images}), "
            "n_In = 127 / r_In and, C_k = 127 / r_k being the scale layer k's integers carry "
            "(C_0 = n_In), n_Out_k = (127 / r_k) / (n_Wk C_{k-1}): n_Out1 = (127 / r_1) / (n_W1 n_In), "
            "n_Out2 = (127 / r_2) / (n_W2 x 127 / r_1), so each layer's integers span -127..127 of its own range.")


@dataclass(frozen=True)
class Bias(Record):
    float_bias: Optional[Accuracy]  # W8 with the bias left in float
    int_bias: Optional[Accuracy]  # W8A8 with the bias quantized to int32
    notes: str
    code: tuple[Listing, ...] = ()
    float_bias_lower: bool = False  # the float-bias variant below its float network (the verdict's word)
    saturated: bool = False
    # the scale of the sum fc3's float bias is added to in the float-bias variant (every weight scale's product),
    # as the scales table prints it for its one seed: (the scale, that seed)
    divided_by: Optional[tuple[float, int]] = None
    datasets: tuple[str, ...] = ()  # the data sets the cells ran on (the note names them)
    # the notebook's "bias not quantized" with the activations quantized too (B.Q4's network), unmeasured here: the
    # scale its float bias would act divided by (fc3's n_w C_{k-1} in W8A8B32, the same seed) and fc3's range r_k there
    w8a8_divided_by: Optional[tuple[float, float]] = None
    net_float: Optional[Measured] = None  # Net's float accuracy (B.Q2 and B.Q4's baseline), beside NetWithBias's (TA7 14)


def bias_answer(tables: Tables) -> Optional[Bias]:
    if not len(tables["ptq_notebook"]):
        return None
    fl = accuracy(tables, "NetWithBias W8 float-bias", "NetWithBias float")
    it = accuracy(tables, "NetWithBias W8A8B32", "NetWithBias float")
    evidence = (fl.evidence if fl else ()) + (it.evidence[:1] if it else ())
    lower = fl is not None and says(fl.verdict, Words("lower", "-", "-", "-")) == "lower"
    scale = _bias_scale(tables, "NetWithBias W8 float-bias") if fl else None
    quantized = _bias_scale(tables, "NetWithBias W8A8B32") if fl else None
    w8a8 = (quantized[1][0], quantized[1][2]) if quantized and quantized[1][2] == quantized[1][2] else None
    cited = tuple(x[0] for x in (scale, quantized if w8a8 else None) if x)
    net = _float_row(tables, "Net float") if fl or it else None
    return Bias(evidence + cited + ((net[0],) if net else ()), (), fl, it,
                _notes(tables, *(x.verdict for x in (fl, it) if x)), handed_in(tables, PartB.Q5), lower,
                saturated(fl or it), scale[1][:2] if scale else None, datasets(tables), w8a8, net[1] if net else None)


def _float_row(tables: Tables, name: str) -> Optional[tuple[Evidence, Measured]]:
    """The notebook table's float network `name` of the first setup (as comparison.accuracy reads it): its row and
    accuracy over seeds."""
    nb = tables["ptq_notebook"].reset_index(drop=True)
    rows = nb[(nb.setup == nb.setup.iloc[0]) & (nb.name == name) & nb.accuracy.notna()]
    if not len(rows):
        return None
    r = next(rows.itertuples())
    return Evidence("ptq_notebook", int(r.Index), name), Measured.of(r, "accuracy")


def _bias_scale(tables: Tables, variant: str) -> Optional[tuple[Evidence, tuple[float, int, float]]]:
    """The bias scale n_w C_{k-1} of `variant`'s biased layer in the scales table (one seed), with that seed and
    the layer's output range r_k (NaN where its activations stay float)."""
    scales = tables["ptq_scales"].reset_index(drop=True)
    rows = scales[(scales.variant == variant) & scales.bias_scale_min.notna()]
    if not len(rows):
        return None
    r = next(rows.itertuples())
    return (Evidence("ptq_scales", int(r.Index), f"{variant} {r.layer}, seed {r.training_seed}"),
            (float(r.bias_scale_min), int(r.training_seed), float(r.activation_range)))


def _second_network(a: Bias) -> str:
    """Whose float accuracy this answer's comparisons are against (TA7 14): NetWithBias, the notebook's second
    network trained from scratch, not Net, whose float accuracy B.Q2 and B.Q4 quote."""
    base = (a.float_bias or a.int_bias)
    if base is None:
        return ""
    net = f"; Net, B.Q2 and B.Q4's float network, reaches {pct(a.net_float)}" if a.net_float else ""
    return (f" The medians over the seeds in float are of NetWithBias, the notebook's second network (fc3 with a bias), "
            f"trained from scratch beside Net with the same seeds: {pct(base.base_accuracy)}, its own{net}.")


def bias_text(a: Bias) -> str:
    text = ("A biased layer computes W * In + beta; scaled, n_W n_In (W * In) + n_W n_In beta, so the bias is quantized "
            "to int32 at scale n_W x the input's scale (the product of every earlier scale), before the output scale.")
    if a.float_bias:
        fl = a.float_bias
        product = ""
        if a.divided_by:
            scale, seed = a.divided_by
            product = f"; {sig(scale)} for training seed {seed}, fc3's bias scale in the scales table"
        text += (" The float-bias variant quantizes the weights only (activations float) and adds fc3's trained bias "
                 f"as is to a sum that carries the product of every layer's weight scale (each 127 / max |w|{product}), "
                 "so the bias acts divided by that product: in effect it is dropped.")
        shows = ("That costs accuracy" if a.float_bias_lower else
                 "Here that shows no effect" + (" (saturated: see B.Q2)" if a.saturated else ""))
        text += f" {shows}: its test accuracy is {compared(fl)}"
        if a.w8a8_divided_by:
            by, r = a.w8a8_divided_by
            text += (" The notebook's step \"weights quantized, bias not\" leaves open whether the activations are "
                     "quantized too; this variant keeps them float. With them quantized (B.Q4's network) the float bias "
                     f"would act divided by fc3's sum scale n_w C_{{k-1}} = {sig(by)} instead (the W8A8B32 row of the "
                     f"scales table: the same weights and calibration), so a bias of 1 would move logits spanning "
                     f"+-{sig(r)} by {sig(1 / by, 2)}: in effect dropped too, and the variant measured stands in for it.")
    if a.int_bias:
        text += f" Quantized to int32, the test accuracy is {compared(a.int_bias)}"
    return text + _second_network(a) + (RULE_SENTENCE if a.float_bias or a.int_bias else "") + a.notes


def code_details(record: Quantized | Bias) -> tuple[str, ...]:
    """The details of an answer that hands in code: its fields' lines, the code named, not printed
    (the report prints it beneath the answer)."""
    named = "; ".join(f"{c.stands_for}: {c.function}" for c in record.code)
    return record_details(dataclasses.replace(record, code=())) + ((f"code that ran: {named}",) if named else ())


QUESTIONS = (
    Question(PartB.Q1, "Visualize weights", ("ptq_weights",), ("ptq_weights",),
             lambda t: _ranges(t, "ptq_weights", "weights"), ranges_text),
    Question(PartB.Q2, "Quantize weights", ("ptq_notebook", "ptq_sweep_weights"), (),
             lambda t: with_checks(_quantized(t, "Net W8", "Net float", PartB.Q2), t, "weights", False), q2_text,
             code_details),
    Question(PartB.Q3, "Visualize activations", ("ptq_activations", "ptq_clipping"), ("ptq_activations",),
             lambda t: _ranges(t, "ptq_activations", "activations"), ranges_text),
    Question(PartB.Q4, "Quantize activations", ("ptq_notebook", "ptq_integer", "ptq_sweep_activations"), (),
             lambda t: with_checks(_quantized(t, "Net W8A8", "Net float", PartB.Q4), t, "activations", True), q4_text,
             code_details),
    Question(PartB.Q5, "Quantize biases", ("ptq_notebook", "ptq_scales"), (), bias_answer, bias_text, code_details),
)


