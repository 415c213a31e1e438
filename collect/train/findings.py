"""The training kind's findings: Part A's questions (Q1-Q4), the lab's and the sweep's, each answered
from its table (collect.train.findings_q1, findings_scaling, findings_accuracy, findings_sweep), after a caveat where the
runs ran on a CPU. A question whose table is empty is not asked by the study: it has no finding."""
from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from collect.findings import Finding
from collect.train.findings_accuracy import lab_findings, q4_findings
from collect.train.findings_q1 import q1_findings
from collect.train.findings_scaling import q2_findings, q3_findings
from collect.train.findings_sweep import sweep_findings
from collect.train.labels import Namer, ok_rows, on_cpu

CAVEAT = "caveat"


def build(built: Mapping[str, pd.DataFrame]) -> tuple[Finding, ...]:
    found = cpu_caveat(built["test"])
    if len(built["q1"]):
        found += q1_findings(built["q1"])
    if len(built["table1"]):
        found += q2_findings(built["table1"], built["strong"], built["q1"])
    if len(built["table2"]):
        found += q3_findings(built["table2"], built["table3"])
    if len(built["q4"]):
        found += q4_findings(built["q4"], built["test"], built["q1"])
    if len(built["test"]):
        found += lab_findings(built["test"])
    if len(built["sweep"]):
        found += sweep_findings(built["sweep"])
    return tuple(found)


def cpu_caveat(test: pd.DataFrame) -> list[Finding]:
    """Said first where runs ran on a CPU: their times describe that CPU, not a GPU."""
    test = test.reset_index(drop=True)
    if not (test.gpu_model.astype(str).str.lower() == "cpu").any():
        return []
    ok = ok_rows(test)
    cpu = [(i, r) for i, r in ok if on_cpu(r.gpu_model)]
    if not cpu:
        return []
    namer = Namer(test, "test")
    text = (f"{len(cpu)} of the {len(ok)} configurations with a result ran on a CPU, not a GPU: there each \"GPU\" "
            "is a process (DDP) or only a larger batch (DataParallel), so their times, speedups, bandwidths and "
            "utilization describe this CPU and say nothing of a GPU's.")
    return [Finding(CAVEAT, text, {"cpu_configurations": float(len(cpu)), "configurations": float(len(ok))},
                    tuple(namer.evidence(i, r) for i, r in cpu[:1]))]
