"""The invariants every training answer keeps (issue 35 item 4): each claim agrees with the numbers its
record holds, checked on the record where the claim is structured and on the text for its wording.
`violations(answer, tables)` lists what an answer breaks ([] when none); tests/collect/
test_claims_properties.py runs it over generated result sets, the committed real ones, and a
fabricated bad answer per invariant."""
from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from collect.train.answers_bandwidth import NEAR, FAR_BELOW, BusbwBecause
from collect.render import percent, seconds
from collect.train.answers_comm import BOUND, Q3Because, by_setup
from collect.train.answers_strong import CUTOFF, LOADER_BOUND, StrongClaim, decided, strong_word
from collect.train.grids import setup_name
from collect.train.labels import hosts
from collect.questions import against
from collect.verdict import SINGLE_RUN_NOISE, leaning

Tables = Mapping[str, pd.DataFrame]
HOST_CAVEAT = "fewer hosts than nodes"


def violations(answer: Any, tables: Tables) -> list[str]:
    """Every invariant `answer` (an Answered: id, text, record) breaks against `tables`."""
    out: list[str] = []
    for check in (opens_yes_no, trend_sign, threshold_list, range_one_column, percents_shown, named_exist,
                  nodes_need_hosts, setting_said, comparative_needs_verdict, evidence_real, accuracies_in_evidence,
                  *ISSUE_44):
        out += [f"{answer.id}: {check.__name__}: {v}" for v in check(answer, tables)]
    return out


def opens_yes_no(a: Any, tables: Tables) -> list[str]:
    """Q6 and Q7 open with Yes or No (the assignment's form)."""
    if a.id in ("A.Q6", "A.Q7") and not re.match(r"(Yes|No)\b", a.text):
        return [f"opens {a.text[:20]!r}"]
    return []


def trend_sign(a: Any, tables: Tables) -> list[str]:
    """A trend word agrees with the sign of the numbers it cites: Q1's less/more time with the ratio of
    the times shown; Q3.1's "falls" with its cited setup's first and last share."""
    r, out = a.record, []
    if a.id == "A.Q1" and r.trend is not None:
        if re.search(r"it takes less time|single runs took less time", a.text) and not r.trend.ratio < 1:
            out.append(f"'less time' at ratio {r.trend.ratio:.3f}")
        if re.search(r"it takes more time|single runs took more time", a.text) and not r.trend.ratio > 1:
            out.append(f"'more time' at ratio {r.trend.ratio:.3f}")
    if a.id == "A.Q3.1" and "share falls with the batch" in a.text:
        group = sorted((s for s in r.splits if s.setup == r.trend_setup), key=lambda s: s.batch)
        if r.because != Q3Because.FEWER_STEPS or not group or not group[-1].share < group[0].share:
            out.append("'falls' where the cited setup's share does not")
    return out


def threshold_list(a: Any, tables: Tables) -> list[str]:
    """Q3.1's communication-bound list and what it leaves out hold exactly the runs at or past BOUND."""
    if a.id != "A.Q3.1":
        return []
    r = a.record
    at = {f"{s.setup} at batch {s.batch}" for s in r.splits if round(100 * s.share) >= round(100 * BOUND)}
    listed = set(r.bound) | set(r.left_out) | set(r.measured_apart) | set(r.near)  # TA3 9: the measurement halves the
    # share; TA7 9: a single run near BOUND
    # TA2 5, 15: where the T1/N model breaks, the cell is left out, and the answer says so
    broken = at & set(r.broken)
    if broken and r.bound and "not where T1/N breaks" not in a.text:
        return [f"{sorted(broken)} left out without saying so"]
    out = [f"{x} at or past {BOUND:.0%} neither listed nor left out" for x in sorted(at - listed - broken)]
    out += [f"{x} listed below {BOUND:.0%}" for x in sorted(listed - at)]
    if r.left_out and "left out" not in a.text.lower():
        out.append("runs left out without saying so")
    # the estimate at or past BOUND, the run's own all-reduce under BOUND of TN: in no list, both figures said
    out += [f"{s.name}: estimate {s.share:.0%} beside a measured {s.measured_s / s.tn_s:.0%} in the list"
            for s in r.splits if s.name in r.bound and s.measured_below_bound]
    # TA7 9, TA8 5: a single run a side is listed only where TN / (T1/N) is past 1 / (1 - BOUND) by SINGLE_RUN_NOISE,
    # the one band for single runs (Q1's, Q2's)
    out += [f"{s.name}: a single run listed at {s.share:.1%}, within {SINGLE_RUN_NOISE:.0%} of {BOUND:.0%}"
            for s in r.splits if s.name in r.bound and s.verdict is not None and s.verdict.one_run
            and s.verdict.ratio * (1 - BOUND) <= 1 + SINGLE_RUN_NOISE]
    out += [f"{s.name} apart without its measured all-reduce" for s in r.splits
            if s.name in r.measured_apart and f"all-reduce measured {seconds(s.measured_s)} s" not in a.text]
    return out


def _as_shown(text: str, value: float) -> bool:
    """`value` printed to the decimals `text` shows is `text` ("0.235" for 0.2351; "184.82" for 184.8249)."""
    decimals = len(text.split(".")[1]) if "." in text else 0
    return abs(float(text.replace(",", "")) - value) <= 0.5 * 10 ** -decimals + 1e-9


def range_one_column(a: Any, tables: Tables) -> list[str]:
    """Q3.2's two ends and its shares come from one column, and the words fit the shares cited."""
    if a.id != "A.Q3.2" or not a.record.ranged:  # no range: range_stands
        return []
    r, out = a.record, []
    ranged = list(r.ranged)  # the basis column less the rates it disowns (TA3 10, TA7 4)
    # the range's two ends (TA3 10: those apart are no ends; each engine's sub-range, "; DataParallel ... GB/s", is
    # range_stands's)
    head = re.sub(r"; DataParallel [^;]*? GB/s, DDP [^(;]*? GB/s", "", a.text.split(" Left out of that range")[0])
    shown = re.findall(r"([\d,.]+) GB/s \(", head)
    ends = {min(ranged, key=lambda u: u.gbps).gbps, max(ranged, key=lambda u: u.gbps).gbps}
    if not shown or not all(any(_as_shown(x, v) for v in ends) for x in shown) or len(shown) < min(len(ends), 2):
        out.append(f"ends {shown} are not {r.basis}'s {sorted(ends)}")
    counts = [(int(n), int(m)) for n, m in re.findall(r"(\d+) of (\d+) DDP rates", a.text)]
    if len({m for _, m in counts}) > 1 or any(n > m for n, m in counts):  # one count of the DDP rates
        out.append(f"DDP rates counted {counts}")
    shares = [u.share for u in ranged if u.share == u.share] or [float("nan")]  # DataParallel's rates have no busbw
    if "near the link" in a.text or r.because == BusbwBecause.NEAR:
        if r.because == BusbwBecause.NEAR and min(shares) < NEAR:
            out.append(f"'near' at a share of {min(shares):.0%}")
    if r.because == BusbwBecause.BELOW and max(shares) >= FAR_BELOW:
        out.append(f"'far below' at a share of {max(shares):.0%}")
    return out


def percents_shown(a: Any, tables: Tables) -> list[str]:
    """"N points" is the difference of the two accuracies shown; Q3.2's span is its shares'."""
    r, out = a.record, []
    if a.id == "A.Q4.1" and r.large and r.baseline:
        m = re.search(r"([\d.]+) points (lower|higher)", a.text)
        if m:
            d = 100 * (r.large.accuracy.value - r.baseline.accuracy.value)
            if f"{abs(d):.2f}" != m.group(1) or (m.group(2) == "lower") != (d < 0):
                out.append(f"{m.group(0)} against {d:.2f}")
    if a.id == "A.Q3.2" and r.ranged:
        # a share over 100% is no share: the text names those rates apart (_over_text)
        shares = [u.share for u in r.ranged if u.share == u.share and u.share <= 1] or [float("nan")]
        m = re.search(r"That is ([\d.]+)%(?:-([\d.]+)%)?(?: \([^)]*\))? of the busbw", a.text)
        if m:
            said = (float(m.group(1)), float(m.group(2) or m.group(1)))
            # as Table 3 prints it, to a tenth of a percent: off by at most half its last digit
            if any(abs(x - 100 * v) > 0.05 + 1e-9 for x, v in zip(said, (min(shares), max(shares)))):
                out.append(f"span {m.group(0)} against {min(shares):.1%}-{max(shares):.1%}")
    return out


def _cells(tables: Tables) -> pd.DataFrame:
    return tables["train_cells"]


def named_exist(a: Any, tables: Tables) -> list[str]:
    """Every setup the text names is among the cells (and, before the note, in an evidence row); every batch
    it names ran or is one the answer asks to add (after "add"), or Q7's question's case."""
    cells = _cells(tables)
    setups = {setup_name(r) for r in cells.itertuples(index=False)}
    batches = set(cells.batch_per_gpu.astype(int)) | set(cells.global_batch.dropna().astype(int))
    out = []
    labels = " | ".join(e.label for e in a.record.evidence)
    for name in set(re.findall(r"\d+ (?:nodes x \d+ )?GPUs?, (?:DDP|DataParallel)", a.text)):
        if name not in setups:
            out.append(f"setup {name!r} not among the cells")
        elif name in a.text.split(" Note: ")[0] and a.record.evidence and name not in labels:
            out.append(f"setup {name!r} named but in no evidence row")
    asks = a.text.split("add ", 1)[0] if a.id != "A.Q7" else a.text.split("question's case", 1)[0].split("add ", 1)[0]
    for b in (int(x.replace(",", "")) for x in re.findall(r"batch(?: size)? (\d[\d,]*)", asks)):
        if b not in batches and b != 128:
            out.append(f"batch {b} not among the cells")
    return out


def nodes_need_hosts(a: Any, tables: Tables) -> list[str]:
    """"N nodes" cited (before the note) needs a result of that setup on N hosts, or the caveat."""
    cells = _cells(tables)
    out = []
    for nodes in {int(n) for n in re.findall(r"(\d+) nodes x", a.text.split(" Note: ")[0])}:  # the note names
        # cells without a result too
        mine = cells[(cells.nodes == nodes) & (cells.status == "ok")]
        if max((hosts(h) for h in mine.hosts), default=0) < nodes and HOST_CAVEAT not in a.text:
            out.append(f"'{nodes} nodes' without {nodes} hosts or the caveat")
    return out


def setting_said(a: Any, tables: Tables) -> list[str]:
    """A precision or pipeline other than fp32 / faithful among the rows an answer cites is said."""
    out = []
    for e in a.record.evidence:
        table = tables.get(e.table)
        if table is None or e.row >= len(table):
            continue
        row = table.iloc[e.row]
        if getattr(row, "status", "ok") != "ok":  # a row without a result quotes no number
            continue
        if row.precision != "fp32" and str(row.precision) not in a.text:
            out.append(f"{row.precision} not said")
        if row.pipeline != "faithful" and f"{row.pipeline} pipeline" not in a.text:
            out.append(f"{row.pipeline} pipeline not said")
    return sorted(set(out))


def _beyond(v: Any) -> bool:
    """Beyond the threshold: by the verdict, or one run a side past its band (collect.verdict.leaning)."""
    return v.outcome == "beyond" or leaning(v) != 0


def comparative_needs_verdict(a: Any, tables: Tables) -> list[str]:
    """No comparative word without a verdict beyond the threshold: Q1's less/more time, Q4.1's points,
    Q2's "Slower than 1 GPU" list and its strong-scaling claim."""
    r, out = a.record, []
    if a.id == "A.Q1" and r.trend is not None and re.search(r"(it takes|single runs took) (less|more) time", a.text) \
            and not (r.trend.outcome == "beyond" or leaning(r.trend, SINGLE_RUN_NOISE)):  # a trend: TA7 8
        out.append(f"less/more time within the threshold (ratio {r.trend.ratio:.3f})")
    if a.id == "A.Q4.1" and r.gap is not None and re.search(r"points (lower|higher)", a.text) and not _beyond(r.gap):
        out.append("points lower/higher within the threshold")
    if a.id == "A.Q2":
        m = re.search(r"Slower than 1 GPU: ([^.]*)\.", a.text)
        slow = {(s.setup, s.batch) for s in r.speedups if _beyond(s.verdict) and s.verdict.ratio > 1}
        if m and not slow:
            out.append("'Slower than 1 GPU' with none beyond the threshold")
        against = {StrongClaim.WORSE: "better", StrongClaim.BETTER: "worse"}.get(r.strong_claim)
        if against and any(strong_word(p.verdict) == against for p in r.strongs if p not in r.loader_invalid):
            out.append(f"strong scaling {r.strong_claim} where a row says {against}")
        if re.search(r"would be worse(?! by the usual argument)", a.text) and r.strong_claim not in (StrongClaim.WORSE, StrongClaim.MIXED):
            out.append("'would be worse' with no data point deciding worse")
        if r.strong_claim == StrongClaim.MIXED and "come out better" not in a.text:
            out.append("rows deciding better left unsaid")
    return out


def evidence_real(a: Any, tables: Tables) -> list[str]:
    """Every evidence row names a table the study has and a row inside it."""
    return [f"{e.table} row {e.row}" for e in a.record.evidence
            if e.table not in tables or e.table == "train_cells" or not 0 <= e.row < len(tables[e.table])]


# --- Part B (the ptq kind) ------------------------------------------------------------------------------


def ptq_violations(answer: Any) -> list[str]:
    """Part B's invariants: each "N points lower/higher" equals its verdict's paired delta, and says lower or
    higher only beyond the threshold; synthetic data is said."""
    from collect.ptq.comparison import pct

    r, out = answer.record, []
    accuracies = [getattr(r, f, None) for f in ("main", "float_bias", "int_bias")]
    clipped = getattr(r, "clipping", None)  # B.Q3: the activation sweep's clipping against max |x|
    cited = [a for a in accuracies if a is not None] + ([clipped] if clipped and clipped.verdict else [])
    for m in re.finditer(r"(\d+\.\d\d) points (lower|higher)", answer.text):
        match = [a for a in cited if f"{abs(a.verdict.delta):.2f}" == m.group(1)]
        if not match:
            out.append(f"{m.group(0)} is no verdict's delta")
        elif not _beyond(match[0].verdict) or (m.group(2) == "lower") != (match[0].verdict.delta < 0):
            out.append(f"{m.group(0)} without a verdict beyond the threshold that way")
    # TA3 25: B.Q3's range choice is settled by the activation sweep where the record has its verdict
    if clipped is not None and re.search(r"\bunless\b", answer.text):
        out.append("the range choice left open although the sweep settles it")
    # TA3 24: one comparison, one number: the paired delta with its seeds' range, never the medians' difference too
    if "medians differ" in answer.text:
        out.append("a second number (the difference of the medians) for a comparison its paired delta gives")
    for m in re.finditer(r"paired differences(?: is ([-+]\d+\.\d\d) points)?, ([-+]\d+\.\d\d) to ([-+]\d+\.\d\d) over",
                         answer.text):
        if not any(f"{a.delta_range[0]:+.2f}" == m.group(2) and f"{a.delta_range[1]:+.2f}" == m.group(3) for a in cited):
            out.append(f"{m.group(0)}: no verdict's seeds range")
    # TA4 25: a comparison leads with its paired delta; the two medians over seeds come after it, said as medians
    for a in [x for x in accuracies if x is not None] + ([clipped] if clipped and clipped.verdict else []):
        if a.verdict.n_b < 2 or a.accuracy is None:
            continue
        pair = f"{a.delta_range[0]:+.2f} to {a.delta_range[1]:+.2f} over"
        median = pct(a.accuracy)
        at = [m.start() for m in re.finditer(re.escape(median), answer.text)]
        p = answer.text.find(pair)
        if p < 0 or not any(i > p for i in at) or any("medians over the seeds" not in answer.text[answer.text.rfind(". ", 0, i):i]
                                              for i in at):
            out.append(f"{median} is said before its paired delta ({pair}), or not as a median")
        # TA5 7: the interval the word is read from stands beside the paired delta, as the tables print it
        if f"{pair} the {a.verdict.n_b} seeds, 95% interval [{a.verdict.low:+.2f}, {a.verdict.high:+.2f}]" \
                not in answer.text:
            out.append(f"the paired delta ({pair}) without its verdict's 95% interval")
    return [f"{answer.id}: {v}" for v in out]


# --- the all-reduce kind --------------------------------------------------------------------------------


def allreduce_violations(answer: Any, tables: Tables) -> list[str]:
    """The all-reduce answers' invariants against allreduce_sizes: the peak cited is the setup's highest
    busbw; each size's regime is its share of that peak against the thresholds the answer states, every size
    in exactly one; the gradient's share of the peak is its busbw over the peak and its regime that share's."""
    from collect.allreduce.tables import BANDWIDTH_SHARE, LATENCY_SHARE

    sizes = tables["allreduce_sizes"]
    by = {name: g for name, g in sizes.groupby("setup", sort=False)}
    r, out = answer.record, []

    def regime(s: float) -> str:
        return "latency-bound" if s < LATENCY_SHARE else "bandwidth-bound" if s >= BANDWIDTH_SHARE else "between"

    for p in getattr(r, "peaks", ()):
        if p.busbw_gbps.value != by[p.setup].busbw_gbps.max():
            out.append(f"{p.setup}: peak {p.busbw_gbps.value} is not its highest busbw")
    for g in getattr(r, "setups", ()):
        group = by[g.setup]
        peak = group.busbw_gbps.max()
        if hasattr(g, "latency_bytes"):
            named = {**{b: "latency-bound" for b in g.latency_bytes}, **{b: "between" for b in g.between_bytes},
                     **{b: "bandwidth-bound" for b in g.bandwidth_bytes}}
            want = {int(row.bytes): regime(row.busbw_gbps / peak) for row in group.itertuples()}
            if named != want or len(g.latency_bytes) + len(g.between_bytes) + len(g.bandwidth_bytes) != len(want):
                out.append(f"{g.setup}: regimes {named} against {want}")
        else:
            if abs(g.share_of_peak - g.busbw_gbps.value / peak) > 1e-9 or g.regime != regime(g.share_of_peak):
                out.append(f"{g.setup}: gradient at {g.share_of_peak:.3f} of the peak, '{g.regime}'")
    return [f"{answer.id}: {v}" for v in out]


ACCURACY_COLUMNS = ("accuracy", "accuracy_min", "accuracy_max", "test_accuracy", "test_accuracy_min",
                    "test_accuracy_max")


def accuracies_in_evidence(a: Any, tables: Tables) -> list[str]:
    """Every accuracy the paragraph quotes (before the note) is a value of one of its evidence rows."""
    if a.id not in ("A.Q4.1", "A.Q4.2", "lab.scaling", "lab.best", "lab.workers"):
        return []
    from collect.render import accuracy_digits

    held = set()
    for e in a.record.evidence:
        row = tables[e.table].iloc[e.row]
        images = row["evaluated_images"] if "evaluated_images" in row.index else float("nan")
        for digits in {2, accuracy_digits(images)}:  # the lab's: the decimals its test images resolve
            held |= {f"{100 * float(row[c]):.{digits}f}" for c in ACCURACY_COLUMNS if c in row.index and row[c] == row[c]}
    said = a.text.split(" Note: ")[0]
    quoted = re.findall(r"(\d+\.\d\d)%", said)
    # "test accuracy 99% (92%-100% over 3 runs) of 100 test images": each figure of it
    for whole in re.findall(r"(\d+(?:\.\d+)?%(?: \([^)]*\))? of [\d,]+ test images)", said):
        quoted += [q for q in re.findall(r"(\d+(?:\.\d+)?)%", whole) if q not in quoted]
    return [f"{q}% in no evidence row" for q in quoted if q not in held]


# --- issue 44: what a strict TA marks down, by class ---------------------------------------------------


def one_run_claims(a: Any, tables: Tables) -> list[str]:
    """Class 1: no claim one run or the spread cannot carry. Q2: "Efficiency above 1" only with a run whose
    N x TN is below T1 by the verdict (or its one-run band); the highest speedup named alone only where none is
    level with it (collect.verdict over the per-run speedups). Q3.1: "falls with the batch" / "smaller at" only
    where every setup's share falls and the cited ends' shares stay apart over the runs' spread."""
    from collect.train.answers_comm import apart
    from collect.train.answers_speedup import speedup_values
    from collect.verdict import verdict

    r, out = a.record, []
    if a.id == "A.Q2":
        if "Efficiency above 1" in a.text and not any(s.verdict is not None and leaning(s.verdict) < 0
                                                      for s in r.superlinear):
            out.append("'efficiency above 1' with no run past T1/N by the verdict")
        # the range's speedups: over a 1-GPU run that is not loader-bound, where any (TA4 6)
        top = max(r.ranked, key=lambda s: s.speedup, default=None)
        level = [s for s in r.ranked if s is not top
                 and decided(verdict(speedup_values(s), speedup_values(top))) <= 0]
        if level and not re.search(r"within run-to-run noise of|cannot rank|too few for the verdict", a.text):
            out.append(f"the highest {top.speedup:.2f}x named alone, {len(level)} level with it")
        # noise is measured only over repeats: of a single run, or of runs that lie apart, it is no finding
        noisy = "within run-to-run noise" in a.text.split(" This is weak scaling")[0]  # the strong rows' is their own
        if noisy and any(s.verdict.one_run for s in [*level, top]):
            out.append("'within run-to-run noise' of a single run")
        low = min(r.ranked, key=lambda s: s.speedup, default=None)
        if "even the lowest is within run-to-run noise" in a.text and max(speedup_values(low)) < min(
                speedup_values(top)):
            out.append("'even the lowest is within run-to-run noise' where its runs and the highest's lie apart")
    m = re.search(r"Efficiency above 100% \(([^)]*)\):", a.text) if a.id == "lab.scaling" else None
    # a whole name of the list ("2 GPUs, DDP" is no item of "2 nodes x 2 GPUs, DDP")
    named = [s for s in r.runs if s.efficiency > 1
             and re.search(rf"(?:^|, |and ){re.escape(s.setup)}(?:$|,| and)", m.group(1))] if m else []
    if any(s.above_n is None or leaning(s.above_n) >= 0 for s in named):
        out.append("'efficiency above 100%' given a cause where N x its time is not below 1 GPU's")
    if a.id == "A.Q3.1" and re.search(r"share falls with the batch|share is smaller at", a.text):
        groups: dict[str, list] = {}
        for sp in sorted(r.splits, key=lambda sp: sp.batch):
            groups.setdefault(sp.setup, []).append(sp)
        multi = [g for g in groups.values() if len(g) >= 2]
        if not all(g[-1].share < g[0].share for g in multi):
            out.append("a falling share where a like-for-like setup's does not fall")
        cited = groups.get(r.trend_setup, [])
        if len(cited) >= 2 and not apart(cited[0], cited[-1]):
            out.append("a falling share inside the runs' spread")
    if a.id == "A.Q3.1":
        out += _q31_trend_claims(a)
    if a.id == "A.Q7" and r.verdict is not None and r.verdict.one_run:  # TA5 1: one run a side decides nothing
        if re.search(r"buffers broadcast \((higher|lower)\)", a.text):
            out.append("Q7's 'higher/lower' from one run a side")
        if a.text.startswith("No"):
            out.append("Q7's No from one run a side")
        # TA8 4: a verdict's word of one run a side; the test images' error only where it holds the gap, its own number
        if re.search(r"buffers broadcast \((not distinguishable|within the)", a.text):
            out.append("Q7's verdict word from one run a side")
        error = re.search(r"inside the ±([\d.]+) points", a.text)
        if error and (not r.inside_count or error.group(1) != f"{r.count_points:.{1 if r.count_points < 10 else 0}f}"):
            out.append(f"Q7's gap inside ±{error.group(1)} points its test images do not give")
    if a.id == "A.Q7":
        out += _q7_single_runs(a)
    return out


def _q7_single_runs(a: Any) -> list[str]:
    """TA7 3: Q7's BN spreads of one run a side draw no comparison and say the column's range among the broadcast
    runs; a spread of runs is only of repeats of one compared configuration; one seed's gap is said to be
    nondeterminism, two seeds' the seeds' spread."""
    r, out = a.record, []
    v = r.bn_verdict
    if v is not None and v.one_run:
        span = f"ranges {r.bn_span.low:.1%}-{r.bn_span.high:.1%} over the test table's {r.bn_span.rows} DDP rows"
        if "no comparison is drawn" not in a.text or span not in a.text:
            out.append("Q7's BN spreads of one run a side set side by side without the column's range")
    if "equivalent runs" in a.text or ("-point spread of the" in a.text and r.repeated is None):
        out.append("Q7's spread of runs not of one compared configuration's repeats")
    if r.verdict is not None and r.verdict.one_run and "points apart" in a.text and not r.inside_count:
        said = (f"both trained from seed {r.seeds[0]}" if len(r.seeds) == 1 else
                "different seeds" if r.seeds else "")
        if said not in a.text:
            out.append("Q7's gap of single runs without what their seeds make of it")
        # TA8 1: of one run a side no cause is a finding: one seed rules the broadcast out, and says what is unmeasured
        if len(r.seeds) == 1 and "one run each does not measure it" not in a.text:
            out.append("Q7's gap of single runs from one seed without what one run each does not measure")
    if re.search(r"the gap is [^;)]*(nondeterminism|the broadcast)", a.text):
        out.append("Q7's gap given a cause")
    return out


def _q31_trend_claims(a: Any) -> list[str]:
    """TA3 3, 5: Q3.1 says how the share moves only where the cited setup's ends have 2+ runs a side and the
    all-reduce the runs measured does not move against the estimate; no share of a cell where T1/N breaks."""
    r, out = a.record, []
    g = by_setup(r.valid).get(r.trend_setup, [])
    moves = re.search(r"share[^.]*?\b(rises|falls|is not monotonic|is smaller at)\b", a.text)
    if moves and len(g) >= 2 and any(s.verdict is None or s.verdict.one_run for s in (g[0], g[-1])):
        out.append(f"'{moves.group(1)}' from single runs")
    against = len(g) >= 2 and g[-1].share > g[0].share and g[-1].measured_s < g[0].measured_s
    if moves and moves.group(1) == "rises" and against and "in the estimate only" not in a.text:
        out.append("a rising share where the measured all-reduce falls")
    out += [f"{s.name}'s share quoted where T1/N breaks" for s in r.splits
            if s.name in r.broken and f"{seconds(s.comm_s)} s ({percent(s.share, 0)}" in a.text and not _free_twin(s, r.splits, lambda t: t.name not in r.broken)]
    return out


def bound_shown(a: Any, tables: Tables) -> list[str]:
    """Class 2: Q3.2's "lower bound" only where every DDP rate's TN - T1/N is at least its exposed all-reduce;
    no share of the busbw above 100% printed."""
    if a.id != "A.Q3.2":
        return []
    out = []
    ddp = [u for u in a.record.ranged if u.exposed_s == u.exposed_s]
    if re.search(r"is a lower bound|can only understate", a.text) and any(u.comm_s < u.exposed_s for u in ddp):
        out.append("'lower bound' where TN - T1/N is under the exposed all-reduce")
    out += [f"{x}% of the busbw" for x in re.findall(r"([\d.]+)%(?:-[\d.]+%)?(?: \([^)]*\))? of the busbw", a.text)
            if float(x) > 100]
    out += [f"{x}% of the busbw" for x in re.findall(r"-([\d.]+)%(?: \([^)]*\))? of the busbw", a.text) if float(x) > 100]
    return out


def range_stands(a: Any, tables: Tables) -> list[str]:
    """Class 2 (TA3 10, TA4 9, TA7 4): Q3.2's headline range, its DataParallel and DDP sub-ranges and its busbw shares
    hold no rate the answer disowns (one that may overstate, where T1/N breaks, or over twice its run's measured
    all-reduce), each judged from the rate's own figures; where every rate is disowned, no range at all."""
    from collect.render import gbps
    from collect.train.grids import busbw_share_text

    if a.id != "A.Q3.2":
        return []
    r, out = a.record, []
    column = [u for u in r.utilizations if u.basis == r.basis]
    off = [u for u in column if u.overstates or u.unlinked or u.name in {b.name for b in r.broken}]
    kept = [u for u in column if u not in off]
    head = next((x for x in re.split(r"\.(?= [A-Z])", a.text) if "Table 3 on" in x), "")
    out += [f"range end {gbps(u.gbps)} GB/s ({u.name}) is disowned" for u in off
            if f"{gbps(u.gbps)} GB/s ({u.setup}, batch {u.batch}" in head]
    for engine, name in (("dp", "DataParallel"), ("ddp", "DDP")):
        m = re.search(rf"\b{name} ([\d.]+)(?:-([\d.]+))? GB/s", head)
        ours = {gbps(u.gbps) for u in kept if u.engine == engine}
        out += [f"{name} sub-range end {x} GB/s of no rate the answer stands behind" for x in (m.groups() if m else ())
                if x and x not in ours]
    span = re.search(r"That is ([\d.]+%)(?:-([\d.]+%))?", a.text)
    shares = {busbw_share_text(u.share) for u in kept if u.share == u.share}
    out += [f"busbw share {x} of no rate the answer stands behind" for x in (span.groups() if span else ())
            if x and x not in shares]
    if column and not kept and ("no range is given" not in head or " GB/s (" in head):
        out.append("every rate disowned, yet a range")
    return out


def measured_scaled(a: Any, tables: Tables) -> list[str]:
    """TA7 5: Q3.1's all-reduce measured is one batch's with/without-sync difference times the epoch's steps: said
    where it is first quoted (that sentence or the next), with the steps of a run it quotes; what more than the
    transfer that difference holds is not measured apart, so no cause is asserted."""
    if a.id != "A.Q3.1":
        return []
    out = []
    sentences = re.split(r"\.(?= [A-Z])", a.text)
    first = next((i for i, x in enumerate(sentences) if "all-reduce measured" in x.lower()), None)
    said = [re.search(r"All-reduce measured = one batch's with/without-sync difference x ([\d,]+) steps \(batch (\d+)\)",
                      x) for x in sentences[first:first + 2]] if first is not None else []
    m = next((x for x in said if x), None)
    if first is not None and not m:
        out.append("an all-reduce measured quoted without how it was scaled")
    if m and not any(s.steps == int(m.group(1).replace(",", "")) and s.batch == int(m.group(2)) for s in a.record.splits):
        out.append(f"{m.group(1)} steps at batch {m.group(2)}: no run's")
    if re.search(r"host overhead, not link time", a.text):
        out.append("host overhead asserted as the cause, not measured")
    return out


def figures_in_tables(a: Any, tables: Tables) -> list[str]:
    """Class 3: Q3.1's loader wait is Table 2's figure as the table prints it (seconds()); Q7's BatchNorm spread
    and Q5's same-position share are the test-accuracy table's."""
    from collect.render import seconds

    if a.id == "A.Q7":  # the ranks' BatchNorm spread: the test-accuracy table's BN spread column
        test = tables["test"]
        spreads = {f"{100 * v:.1f}" for v in test.get("ddp_bn_rank_spread", []) if v == v}
        said = re.findall(r"differ by up to ([\d.]+)%", a.text) + re.findall(r"layer's mean, against ([\d.]+)%", a.text)
        return [f"BN spread {x}% in no printed row" for x in said if x not in spreads]
    if a.id == "A.Q5":  # TA3 2: the same-step share with set_epoch, as the test table prints it
        shares = {percent(v) for v in tables["test"].get("ddp_order_overlap_with_set_epoch", []) if v == v}
        said = re.findall(r"with it, ([\d.]+%) of a rank's samples", a.text)
        return [f"same position {x} in no printed row" for x in said if x not in shares]
    if a.id == "A.Q1" and "95% interval" in a.text:
        return ["the verdict's interval, in no printed table"]  # TA2 20
    if a.id == "A.Q3.2" and re.search(r"[\d.]+-[\d.]+ GB/s over its runs", a.text):
        return ["a rate's range over its runs in no printed table"]  # TA2 7, 25
    if a.id != "A.Q3.1":
        return []
    t2 = tables["table2"]
    # TA3 11: every share quoted (but the threshold) is Table 2's comm share column as printed
    shares = {percent(v, 0) for c in ("comm_share", "comm_measured_share") for v in t2.get(c, []) if v == v}
    # the verdict's threshold (TA7 9: "by more than 5%", "within 5% of") is no share
    quoted = re.findall(r"(?<!more than )(?<!within )(?<![\d.])(-?\d+%)", a.text)  # a share may be negative
    unprinted = [x for x in quoted if x not in shares | {f"{BOUND:.0%}"}]
    if unprinted:
        return [f"shares {unprinted} in no printed row of Table 2"]
    # TA3 4: a figure held against itself is no difference
    same = re.findall(r"(\d[\d.,]*) s (?:measured )?against \1 s", a.text)
    if same:
        return [f"{same} against itself"]
    # TA2 4, 23: "compute X s and communication Y s" quotes Table 2's estimate columns as printed
    est = {seconds(v) for v in t2.get("compute_est_s", []) if v == v}
    comm = {seconds(v) for v in t2.get("comm_est_s", []) if v == v}
    quoted = re.findall(r"compute ([\d.,-]+) s and communication ([\d.,-]+) s", a.text)
    if any(c not in est or m not in comm for c, m in quoted):
        return [f"compute/communication {quoted} in no printed row of Table 2"]
    printed = {seconds(v) for v in t2.data_wait_s if v == v} if "data_wait_s" in t2 else set()
    out = [f"loader wait {x} s in no printed row" for x in re.findall(r"waited ([\d.,]+) s on its loader", a.text)
           if x not in printed]
    # the compute measured against T1/N where the model breaks: Table 2's two columns as printed
    measured = {seconds(v) for v in t2.get("compute_measured_s", []) if v == v}
    estimate = {seconds(v) for v in t2.get("compute_est_s", []) if v == v}
    return out + [f"compute {m} against {e} s in no printed row" for m, e in
                  re.findall(r"\(([\d.,]+) against ([\d.,]+) s\)", a.text) if m not in measured or e not in estimate]


def no_hidden_list(a: Any, tables: Tables) -> list[str]:
    """Class 4: a list past a threshold names every entry: no "and N more setups" left for the reader to find."""
    return [m for m in re.findall(r"and \d+ more setups?", a.text)]


def systems_facts(a: Any, tables: Tables) -> list[str]:
    """Class 5: where DataParallel's traffic is described (Q3.1 on a GPU, Q6), the gradients' reduce onto GPU 0
    in the backward is said; Q4.2 reports the
    remedies at every batch where one ran; Q7's accuracies carry the decimals their test images resolve, and no
    "higher" or "lower" inside the error that count allows (collect.verdict.count_error)."""
    out = []
    said = "gradients onto GPU 0"
    if a.id == "A.Q3.1" and not a.record.cpu and any(sp.engine == "dp" for sp in a.record.splits) and said not in a.text:
        out.append("DataParallel's gradient reduce unsaid")
    if a.id == "A.Q6" and "DataParallel" in a.text and said not in a.text:
        out.append("DataParallel's gradient reduce unsaid")
    r = a.record
    if a.id == "A.Q7":
        out += _evaluation_said(a, tables)
    if a.id == "A.Q7" and r.verdict is not None and r.images == r.images:
        from collect.render import accuracy_digits
        from collect.verdict import count_error

        error = 100 * count_error(r.only.value, r.broadcast.value, r.images)
        if re.search(r"buffers broadcast \((higher|lower)\)", a.text) and abs(r.verdict.delta) <= error:
            out.append(f"'higher/lower' {r.verdict.delta:+.1f} points inside the {error:.1f} the test images allow")
        digits = accuracy_digits(r.images)
        out += [f"{x}% printed past the {digits} decimals {int(r.images)} images resolve"
                for x in re.findall(r"test accuracy ([\d.]+)%", a.text) if len(x.partition(".")[2]) > digits]
    if a.id == "A.Q4.2":
        q4 = tables["q4"]
        ran = q4[(q4.lr_scaling == "linear") & ~q4.sync_bn.astype(bool) & (q4.status == "ok") & q4.accuracy.notna()]
        out += [f"remedies at batch {b} per GPU unreported" for b in sorted(set(ran.batch_per_gpu.astype(int)))
                if not re.search(rf"\b{b} per GPU", a.text)]
    return out


def _evaluation_said(a: Any, tables: Tables) -> list[str]:
    """TA8 3: Q7's statistics the evaluation uses are the test table's: every rank's is rank 0's, as its footnote says
    (each image is evaluated once over all ranks); "rank 0's, which the evaluation uses" alone read as rank 0 only."""
    from collect.train.grids import accuracy_grid

    out = ["Q7's 'which the evaluation uses' of rank 0's alone"] * ("which the evaluation uses" in a.text)
    said = "each evaluation gives all ranks rank 0's (test table)"
    if said in a.text and "test" in tables and len(tables["test"]):
        footnote = next(x for x in accuracy_grid(tables["test"]).formulas if x.startswith("test accuracy ="))
        if "rank 0's on every rank, broadcast to all before each evaluation" not in footnote:
            out.append("Q7's rank 0's statistics at the evaluation, which the test table does not say")
    return out


def one_comparison_one_number(a: Any, tables: Tables) -> list[str]:
    """Class 6: Q1's unsettled pair reads as `submit --settle` prints it: the same direction (a speedup) and ratio."""
    if a.id == "A.Q3.1":  # TA2 5, 15: a cell "mostly not communication" is no cell "at least 50% communication"
        both = set(a.record.bound) & set(getattr(a.record, "broken", ()))
        if both:
            return [f"{sorted(both)} both mostly not communication and at least 50% communication"]
    from orchestrator.settle import compared

    r = a.record
    if a.id != "A.Q1" or r.trend is None or "is not settled" not in a.text:
        return []
    _, inverted = compared("trend", r.trend)
    settle = f"{1 / r.trend.ratio if inverted else r.trend.ratio:.2f}x"
    m = re.search(r"speedup over batch \d+ is ([\d.]+x)", a.text)
    return [] if m and m.group(1) == settle else [f"Q1 says {m.group(1) if m else 'another ratio'}, settle {settle}"]


def ta3_claims(a: Any, tables: Tables) -> list[str]:
    """Class 7 (the third TA's Q1, Q2, Q4.1): a DataParallel speedup on a CPU is no N-worker run (8); a strong row
    on a loader-bound T1(B) decides nothing, unless it is worse with T1(b) not loader-bound (16); runs apart are
    not "unsettled" (18); no strong-scaling claim from 1 GPU alone (19); Q1's step counts come with the images
    and batches they are computed from, and no kernels on a CPU (23); a swinging large run is said to swing (17);
    a study with no Q4.1 run names the one that answers it (1)."""
    r, out = a.record, []
    if a.id == "A.Q2":
        out += [f"{s.setup}, batch {s.batch}: a speedup on a CPU" for s in r.speedups if r.cpu and s.engine == "dp"]
        out += [f"strong row {p.setup}, {p.batch} per GPU counted on a loader-bound T1(B)" for p in r.strongs
                if p.loader_bound and p not in r.loader_invalid
                and not (decided(p.verdict) < 0 and not (p.batch_wait_share >= LOADER_BOUND))]
        for s in r.speedups:
            sides = s.verdict.sides
            apart = sides is not None and (max(sides.b_values) < min(sides.a_values)
                                           or min(sides.b_values) > max(sides.a_values))
            if apart and f"{s.setup}, batch {s.batch}; unsettled" in a.text:
                out.append(f"{s.setup}, batch {s.batch}: 'unsettled' where every run is on one side")
        if not r.strongs and re.search(r"GPUs sharing batch|would be (worse|better)(?! by the usual argument)", a.text):
            out.append("a strong-scaling claim with no strong-scaling pair")
    if a.id == "A.Q1":
        m = re.search(r"fewer steps \(([\d,]+) of (\d+) images against ([\d,]+) of (\d+)\)", a.text)
        said = f"of {r.images:,} images" in a.text  # the epoch the steps divide
        if "fewer steps" in a.text and not (m and said and all(
                int(m.group(i).replace(",", "")) == -(-r.images // int(m.group(i + 1))) for i in (1, 3))):
            out.append("step counts not the epoch's images / batch, with both beside them")
        if r.cpu and "kernel launches" in a.text:
            out.append("kernel launches on a CPU")
    if a.id == "A.Q4.1" and r.large is not None and r.unstable and "unstable" not in a.text:
        out.append("an unstable large run's 5th epoch given as settled")
    if a.id == "A.Q4.1" and r.large is None and not r.planned and "study, which runs them on 4 GPUs, answers it" not in a.text:
        out.append("no Q4.1 run, and no study named that answers it")
    return out


def _free_twin(s: Any, splits: Any, free: Any) -> bool:
    """Another split, one the rule lets the answer quote bare (`free`), prints the same estimate and share: a quote of
    those figures cannot be told to be this one's."""
    key = (seconds(s.comm_s), percent(s.share, 0))
    return any(t is not s and free(t) and (seconds(t.comm_s), percent(t.share, 0)) == key for t in splits)


def ta4_q3_claims(a: Any, tables: Tables) -> list[str]:
    """Class 8 (the fourth and fifth TA's Q3.1, Q3.2): every DDP estimate the headline quotes carries the run's own
    all-reduce measured with its share of TN, whatever their ratio (TA4 2, 3; TA5 3); Q3.2's top rate on an unsettled
    TN - T1/N says it is not firm (9; its range's rates: range_stands); the busbw and its shares are Table 3's printed
    figures (10, 23)."""
    from collect.render import gbps
    from collect.train.grids import busbw_share_text, busbw_text

    r, out = a.record, []
    if a.id == "A.Q3.1":
        for s in (s for s in r.splits if s.engine == "ddp" and s.measured_s == s.measured_s
                                   and not _free_twin(s, r.splits, lambda t: t.measured_s != t.measured_s)):
            both = f"all-reduce measured {seconds(s.measured_s)} s, {percent(s.measured_share, 0)} of TN"
            for m in re.finditer(re.escape(f"{seconds(s.comm_s)} s ({percent(s.share, 0)}") + r"([^)]*)\)", a.text):
                if both not in m.group(1):
                    out.append(f"{s.name}: an estimate quoted without its run's measured all-reduce and its share")
                if s.under_measured and "understates it" not in m.group(1):  # TA8 12: Q3.2 leaves its rate out
                    out.append(f"{s.name}: an estimate under its measured all-reduce quoted bare")
                if s.splits_disagree and "disagree" not in m.group(1):  # TA8 6: past SINGLE_RUN_NOISE either way
                    out.append(f"{s.name}: an estimate and a measured all-reduce that disagree, unsaid")
            if s.unlinked and f"communication {seconds(s.comm_s)} s" in a.text:  # TA7 7, TA8 12: Q3.2 leaves it out
                out.append(f"{s.name}: an estimate over twice its measured all-reduce quoted as communication")
    if a.id != "A.Q3.2":
        return out
    for u in (u for u in r.utilizations if u.basis == r.basis):
        said = f"{gbps(u.gbps)} GB/s ({u.setup}, batch {u.batch}"
        top = re.search(rf" to {re.escape(said)}([^)]*)\)", a.text)
        if top and not u.settled and "not firm" not in top.group(1):
            out.append(f"top rate {said}) on an unsettled TN - T1/N, not said")
    printed = {busbw_text(u.busbw_gbps) for u in r.utilizations if u.busbw_gbps == u.busbw_gbps}
    out += [f"busbw {x} GB/s in no printed row" for x in re.findall(r"(?:up to|its busbw) ([\d.,]+) GB/s\)", a.text) if x not in printed]
    buses = [u for u in r.ranged if u.busbw_gbps == u.busbw_gbps]
    if len(buses) == 1 and re.search(r"up to [\d.,]+ GB/s\)", a.text):  # TA8 11
        out.append("'up to' over a single busbw")
    shares = {busbw_share_text(u.share) for u in r.utilizations if u.share == u.share}
    span = re.search(r"That is ([\d.]+%)(?:-([\d.]+%))?", a.text)
    out += [f"share {x} in no printed row" for x in (span.groups() if span else ()) if x and x not in shares]
    return out


def ta4_claims(a: Any, tables: Tables) -> list[str]:
    """Class 8 (the fourth TA's Q1, Q2, Q4.1): no ratio and no "within" from one run a side (7), nor "slower than 1
    GPU" from one without saying so (14); every step count and step time Q1 quotes is the Q1 table's as printed (20);
    Q2's range ends on no loader-bound T1 where a clean one exists, and "loader-bound" comes with its cutoff (6);
    Q4.1's accuracies by epoch are a printed row's (11)."""
    from collect.render import number

    r, out = a.record, []
    if a.id == "A.Q1":
        if r.trend is not None and r.trend.one_run and re.search(r"[\d.]+x faster", a.text):
            out.append("a ratio from one run a side")
        settled = r.settled_step is not None and not r.settled_step.verdict.one_run  # TA7 8: its words are its own
        if r.plateau_verdict is not None and r.plateau_verdict.one_run and "stays within" in a.text and not settled:
            out.append("'stays within' from one run a side")
        q1 = tables["q1"]
        steps = {f"{int(v):,}" for v in q1.get("steps", pd.Series(dtype=float)) if v == v}
        ms = {number(v, 2) for v in q1.get("step_ms", pd.Series(dtype=float)) if v == v}
        said = re.findall(r"fewer steps \(([\d,]+) of \d+ images against ([\d,]+) of", a.text)
        out += [f"{x} steps in no printed row" for pair in said for x in pair if x not in steps]
        times = re.findall(r"took ([\d.]+) ms against ([\d.]+) ms", a.text)
        out += [f"{x} ms a step in no printed row" for pair in times for x in pair if x not in ms]
        if re.search(r"one step of \d+ images took [\d.]+x", a.text, re.IGNORECASE):
            out.append("a step-time ratio with no printed step time")
    if a.id == "A.Q2":
        m = re.search(r"Slower than 1 GPU: (.*?)(?:; slower than 1 GPU in the single run of each|\. )", a.text)
        out += [f"{s.setup} at {s.batch}: slower than 1 GPU from one run a side" for s in r.speedups
                if m and s.verdict.one_run and decided(s.verdict) > 0
                and re.search(rf"{re.escape(s.setup)} at batch [^;]*\b{s.batch}\b", m.group(1))]
        m = re.search(r"[Ss]lower than 1 GPU in the single run of each: (.*?)(?:; within|\. )", a.text)
        out += [f"{s.setup} at {s.batch}: slower than 1 GPU from single runs {s.speedup:.2f}x, within "
                f"{SINGLE_RUN_NOISE:.0%}" for s in r.speedups
                if m and s.verdict.one_run and leaning(s.verdict, SINGLE_RUN_NOISE) <= 0
                and re.search(rf"{re.escape(s.setup)} at batch [^;]*\b{s.batch}\b", m.group(1))]
        clean = [s for s in r.speedups if not s.loader_bound]
        bound = [s for s in r.speedups if s.loader_bound]
        top = max(bound, key=lambda s: s.speedup, default=None)
        if clean and top is not None and f"to {top.speedup:.2f}x ({top.setup}, batch {top.batch}" in a.text:
            out.append(f"the range ends on {top.speedup:.2f}x, over a loader-bound 1-GPU run")
        if "loader-bound" in a.text and f"waiting on its loader {CUTOFF} is loader-bound" not in a.text \
                and f"waiting {CUTOFF}, a 1-GPU run is loader-bound" not in a.text:
            out.append("'loader-bound' without its cutoff")
    m = re.search(r"by epoch 1-\d+ was (.*?) \(", a.text) if a.id == "A.Q4.1" else None
    if m:  # 11: the per-epoch accuracies quoted are an evidence row's accuracy-by-epoch column as printed
        from collect.train.grids import by_epoch

        printed = {by_epoch(tables[e.table].iloc[e.row]) for e in r.evidence if e.table == "q4"}
        said = ", ".join(re.findall(r"(\d+)%", m.group(1)))
        if said not in printed:
            out.append(f"accuracies by epoch {said} in no printed row")
    return out


def single_run_steps(a: Any, tables: Tables) -> list[str]:
    """TA7 8: Q1's "falling (rising) with each larger batch from A to B" only where every step from A to B is told
    that way: by the verdict over repeats, or, with a single run a side, past SINGLE_RUN_NOISE (collect.verdict)."""
    m = re.search(r"(falling|rising) with each larger batch from (\d+) to (\d+)", a.text) if a.id == "A.Q1" else None
    if not m:
        return []
    way, low, high = (-1 if m.group(1) == "falling" else 1), int(m.group(2)), int(m.group(3))
    ok = [b for b in a.record.batches if b.train_s is not None and low <= b.batch <= high]
    return [f"'{m.group(1)}' to {high} over {x.batch} -> {y.batch} ({y.train_s.value / x.train_s.value:.3f}x), a step "
            "no verdict tells" for x, y in zip(ok, ok[1:], strict=False)
            if leaning(against(y.train_s, x.train_s), SINGLE_RUN_NOISE) != way]


def upper_bounds_apart(a: Any, tables: Tables) -> list[str]:
    """TA7 2: Q2's headline range holds no upper bound (a T1 beside other cells over a TN alone, Speedup.upper_bound)
    where a clean speedup exists, and names one only where its sentence says these are upper bounds."""
    r = a.record
    if a.id != "A.Q2" or not r.speedups:
        return []
    head = re.split(r"\.\s", a.text, maxsplit=1)[0].split("; Table 1's higher ones")[0]  # the range, its words
    out = []
    pool = [s for s in r.speedups if not s.loader_bound] or list(r.speedups)  # the loader rule's (TA4 6)
    if any(not s.upper_bound for s in pool):
        out += [f"upper bound {s.speedup:.2f}x ({s.setup}, batch {s.batch}) ranked with clean ones"
                for s in r.ranked if s.upper_bound]
    named = [s for s in r.speedups if s.upper_bound and f"{s.speedup:.2f}x ({s.setup}, batch {s.batch}" in head]
    if named and "upper bound" not in head:
        out += [f"upper bound {s.speedup:.2f}x ({s.setup}, batch {s.batch}) in the headline unqualified" for s in named]
    return out


def per_step_reason(a: Any, tables: Tables) -> list[str]:
    """TA5 6: Q1 gives a per-step cost as the reason a larger batch would be faster only where one step's time grows
    slower than its images (the ratios the sentence cites); else it says there is none to amortise."""
    if a.id != "A.Q1":
        return []
    out = []
    for m in re.finditer(r"(the reason is per step|grows with its images): one step [^(]*\(([\d.]+)x, for ([\d.]+)x the "
                         r"images\)(, so there is no per-step overhead)?", a.text):
        amortises = float(m.group(2)) < float(m.group(3))
        if amortises != (m.group(1) == "the reason is per step") or amortises == bool(m.group(4)):
            out.append(f"{m.group(0)[:60]}...: a per-step reason said {'wrongly' if amortises else 'without one'}")
    return out


def same_position_said(a: Any, tables: Tables) -> list[str]:
    """TA5 15: Q5's share with set_epoch is said as its count where it prints 0.0% ("none of 12,500"), and at chance
    exactly where its record is (SamePosition.at_chance), never read as a leak."""
    run = getattr(a.record, "run", None) if a.id == "A.Q5" else None
    if run is None or "with it," not in a.text:
        return []
    s, out = run.with_set_epoch, []
    if re.search(r"with it, 0\.0% of a rank's", a.text):
        out.append("a share printed 0.0% without its count")
    if s.count is not None and not re.search(rf"with it, (over its {s.runs} runs, )?"
                                             rf"{'none' if s.count == 0 else f'{s.count:,}'} of a rank's {s.places:,}", a.text):
        out.append(f"{s.count} of {s.places} places not said as their count (TA7 10)")
    if s.count == 0 and f"none of a rank's {s.places:,} samples" not in a.text:
        out.append("no repeat, not said as none of the rank's samples")
    if s.at_chance != ("the chance level" in a.text):
        out.append(f"at chance is {s.at_chance}, said otherwise")
    return out


ISSUE_44 = (one_run_claims, bound_shown, range_stands, measured_scaled, figures_in_tables, no_hidden_list, systems_facts,
            one_comparison_one_number, ta3_claims, ta4_q3_claims, ta4_claims, same_position_said, per_step_reason,
            single_run_steps, upper_bounds_apart)
