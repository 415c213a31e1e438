"""The ResNet-18 script (kind command) against the built-in kind on 1 GPU: each configuration's
timed epoch_s and train_s over repeats, and collect.verdict on script against built-in (5%).

    python benchmarks/command_vs_builtin.py BUILTIN_RESULTS SCRIPT_RESULTS
"""
from __future__ import annotations

import statistics
import sys
from collections import defaultdict
from pathlib import Path

from collect.details import verdict_text
from collect.verdict import verdict
from jobs.core.layout import result_files
from jobs.core.result import read_result


def timed(results_dir: Path) -> dict[int, dict[str, list[float]]]:
    """batch per GPU -> metric -> each ok repeat's timed value."""
    found: dict[int, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for path in result_files(results_dir):
        result = read_result(path)
        if result.status != "ok":
            print(f"{path.name}: {result.status}: {(result.error or '').splitlines()[-1:]}")
            continue
        body, batch = result.body, int(result.cell["batch_per_gpu"])
        line = body.timed_line if hasattr(body, "timed_line") else {"epoch_s": body.timed.epoch_s,
                                                                    "train_s": body.timed.train_s}
        for metric in ("epoch_s", "train_s"):
            if metric in line:
                found[batch][metric].append(line[metric])
    return found


def main(builtin_dir: str, script_dir: str) -> None:
    builtin, script = timed(Path(builtin_dir)), timed(Path(script_dir))
    print(f"{'batch':>5} {'metric':>8} {'built-in (s)':>26} {'script (s)':>26}  script vs built-in")
    for batch in sorted(set(builtin) & set(script)):
        for metric in ("epoch_s", "train_s"):
            a, b = builtin[batch][metric], script[batch][metric]
            if not a or not b:
                continue
            v = verdict(a, b, 0.05)
            print(f"{batch:>5} {metric:>8} {_shown(a):>26} {_shown(b):>26}  {verdict_text(v)}")


def _shown(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f}) n={len(values)}"


if __name__ == "__main__":
    main(*sys.argv[1:3])
