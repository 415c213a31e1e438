"""What the training kind's answers share: the question ids, the device they ran on (and the CPU
caveat, said once inside an answer), a figure as text, and a row of a table as evidence."""
from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, Optional

import pandas as pd

from collect.evidence import Evidence, Measured, listing, shown
from collect.packing import BESIDE, Packing, packing
from collect.questions import values, with_sides
from collect.render import accuracy_digits, percent, seconds
from collect.verdict import Difference, difference
from collect.train.grids import launch_name
from collect.train.labels import Namer, device, hosts_ran, on_cpu, on_fewer_hosts, present
from jobs.core.synthetic import SYNTHETIC_IMAGES

# collect.verdict.SINGLE_RUN_NOISE as Q1 and Q2 word it: a rule this hand-in takes, not a spread its single runs measured (TA8 13)
SINGLE_BAND = "the band this hand-in takes for single runs (one run per configuration measures no spread)"


CPU_CAVEAT = "these ran on a CPU, not a GPU, each \"GPU\" a process sharing its cores: the times describe that CPU"
HOMEWORK = ("fp32", "faithful")  # the homework's precision and pipeline: any other is said in the answer


def where(models: Iterable[Any]) -> tuple[str, bool]:
    """("NVIDIA H200", False); ("a CPU, not a GPU", True) where any row ran on a CPU."""
    models = [m for m in models if isinstance(m, str) and m]
    return device(models), any(on_cpu(m) for m in models)


def secs(m: Measured) -> str:
    return shown(m, seconds, " s")


def pct(m: Measured) -> str:
    return shown(m, lambda v: percent(v, 2))


def figure(row: Any, name: str) -> Optional[Measured]:
    """The row's figure over its repeats, None where it has none."""
    return Measured.of(row, name) if row is not None and row.status == "ok" and present(getattr(row, name)) else None


def rows_of(table: pd.DataFrame, where: Optional[pd.Series] = None) -> list[tuple[int, Any]]:
    """(position, row) of every row, or of those the boolean mask `where` (by position) keeps: a
    filter run in pandas, so that a question after a few rows of a 100,000-row table does not make
    tuples of them all (the caller still checks each row it keeps)."""
    table = table.reset_index(drop=True)
    if where is not None:
        table = table[where.to_numpy(dtype=bool)]
    return [(int(i), r) for i, r in zip(table.index, table.itertuples(index=False), strict=True)]


POINT = 2.0  # percentage points: a smaller accuracy difference is none (a seed's spread is about half a point;
# the large batch and its remedies move the accuracy by tens)


def points_against(new: Measured, base: Measured, threshold: float = POINT) -> Difference:
    """An accuracy against another as a difference in percentage points over their repeats
    (collect.verdict.difference, threshold POINT unless given): the "N points lower" a sentence cites is its
    delta. Its sides hold the points and the cells (collect.settle sizes repeats from them)."""
    new, base = new.scaled(100), base.scaled(100)
    return with_sides(difference(values(base), values(new), threshold), new, base)


def accuracy(m: Optional[Measured], images: float, count: bool = True) -> str:
    """"100% (92%-100% over 3 runs) of 100 test images": the decimals that many images resolve
    (collect.render.accuracy's rule), the count said once."""
    if m is None:
        return "not recorded"
    text = shown(m, lambda v: percent(v, accuracy_digits(images)))
    return text + (f" of {int(images):,} test images" if count and present(images) and images > 0 else "")


def cited(namer: Namer, rows: Iterable[tuple[int, Any]]) -> tuple[Evidence, ...]:
    return tuple(namer.evidence(i, r) for i, r in rows)


LOADER_WAIT = 0.05  # a 1-GPU run waiting on its loader at least this share of its epoch explains an efficiency above 1

# What DataParallel moves each step (torch.nn.DataParallel: replicate, scatter, gather, and the backward of
# those copies, which sums every replica's gradients into GPU 0's): Q3.1 and Q6 say it in these words.
DP_TRAFFIC = "copies the model to each GPU every forward, scatters inputs, gathers outputs, sums gradients onto GPU 0"


def at_batches(pairs: Iterable[tuple[str, int]], setups: int = 3) -> str:
    """The runs by setup, in first-seen order: "2 GPUs, DataParallel at batch 32 and 128; 4 GPUs, DDP at
    batch 512"; past `setups` setups, "... and 2 more setups"."""
    groups: dict[str, list[int]] = {}
    for setup, batch in pairs:
        groups.setdefault(setup, []).append(batch)
    parts = [f"{s} at batch {listing(map(str, b), 8)}" for s, b in groups.items()]
    rest = len(parts) - setups
    more = f" and {rest} more setup{'s' * (rest > 1)}" if rest > 0 else ""
    return "; ".join(parts[:setups]) + more


def caveats(cpu: bool, missing: Iterable[str], notes: Iterable[str] = ()) -> str:
    """The sentence that says, once, what an answer's numbers cannot show: a CPU run, `notes`, and
    what has no figure (each named where two or fewer, else counted by why); "" when nothing."""
    missing = [m for m in missing if m]
    parts = ([CPU_CAVEAT] if cpu else []) + [n for n in notes if n]
    if len(missing) <= 2:
        parts += missing
    else:
        why = Counter(m.rsplit("(", 1)[-1].split(":")[0].rstrip(")") if "(" in m else "other" for m in missing)
        parts.append(f"{len(missing)} configurations have no figure (" + ", ".join(f"{n} {w}" for w, n in why.items())
                     + "; named in the table)")
    return (" Note: " + "; ".join(parts) + ".") if parts else ""


def setting_notes(cells: Optional[pd.DataFrame], rows: Iterable[Any], accuracy: bool = True,
                  named: bool = False) -> tuple[str, ...]:
    """What the cited rows' own settings make of their numbers, each said once: synthetic data (what it
    is: a colour per class plus noise, jittered where the cells jitter it), a precision or pipeline
    other than the homework's fp32 loop, and setups of N nodes whose results ran on fewer hosts (by
    their hostnames in `cells`, the train_cells frame; not where the answer's `named` labels say it). The
    data is said only where the answer cites an `accuracy`."""
    rows = list(rows)
    notes = []
    jitters = sorted({float(r.colour_jitter) for r in rows if r.dataset == "synthetic" and accuracy})
    if jitters:
        jitter = (f", colour jittered by {listing([f'{j:g}' for j in jitters if j])} levels" if any(jitters)
                  else "")
        notes.append(f"the data is synthetic ({SYNTHETIC_IMAGES}{jitter}), not CIFAR-10")
    other = sorted({(str(r.precision), str(r.pipeline)) for r in rows} - {HOMEWORK})
    if other:
        said = listing([f"{p} on the {q} pipeline" + (" (data kept on the GPU)" if q == "fast" else "") for p, q in other])
        notes.append(f"these ran in {said}, not the homework's fp32 loop")
    if any(r.engine == "dp" and on_cpu(getattr(r, "gpu_model", None)) for r in rows):
        notes.append("DataParallel on a CPU wraps nothing: one process trains on the global batch")
    short = () if named else one_host(cells, rows)
    if short:
        notes.append(f"{listing(short)} crossed no network (fewer hosts than nodes)")
    shared = packing_behind(cells, rows)
    if shared.beside:  # all of them too: Q1's T1 are every speedup's base (TA5 5)
        which = (f"{shared.beside} of these {shared.alone + shared.beside} runs ran beside other cells on their machine "
                 "and the rest alone" if shared.mixed else f"these {shared.beside} runs all ran beside other cells on "
                 "their machine")
        notes.append(f"{which} ({BESIDE} in the tables): a time beside neighbours may be slower (`submit --exclusive` "
                     "runs one cell at a time)")
    return tuple(notes)


def packing_behind(cells: Optional[pd.DataFrame], rows: Iterable[Any]) -> Packing:
    """How the results of the setups (and batches) of `rows` shared their machine (collect.packing)."""
    keys = {(r.engine, int(r.nodes), int(r.gpus_per_node), getattr(r, "batch_per_gpu", None)) for r in rows}
    if cells is None or not keys or "batch_per_gpu" not in cells:
        return Packing(0, 0)
    mine = [(e, int(n), int(g), b) in keys for e, n, g, b in
            zip(cells.engine, cells.nodes, cells.gpus_per_node, cells.batch_per_gpu, strict=True)]
    return packing(cells[mine])


def one_host(cells: Optional[pd.DataFrame], rows: Iterable[Any]) -> tuple[str, ...]:
    """The multi-node setups among `rows` none of whose ok results ran on as many hosts as nodes."""
    setups = {(r.engine, int(r.nodes), int(r.gpus_per_node)) for r in rows if int(r.nodes) > 1}
    if not setups:
        return ()
    return tuple(launch_name(nodes, per_node, max(1, hosts_ran(cells, engine, nodes, per_node)))
                 for engine, nodes, per_node in sorted(setups) if on_fewer_hosts(cells, engine, nodes, per_node))


def part_a(tables: Mapping[str, pd.DataFrame]) -> bool:
    """The study asks Part A: it has 1-GPU timing runs (Q1: no remedy, the timing protocol's epochs)."""
    return bool(len(tables["q1"]))
