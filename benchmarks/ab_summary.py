"""The faithful pipeline against the plain loop, per configuration, from benchmarks/ab_pairs.py's
runs: the ratio faithful / plain of the second epoch's median time, its interval and the verdict
of the one rule (collect.verdict, threshold 5%).

    python benchmarks/ab_summary.py OUT/pairs.jsonl      # or the log ab_pairs.py printed

Both sides' epoch is the same host clock around a whole epoch, data loading included. The
"train" figure is not compared: the faithful loop never waits for the GPU inside an epoch, so its
host-side time outside the loader is not the GPU's work, while the plain loop's is.
"""
from __future__ import annotations

import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from collect.verdict import verdict

LINE = re.compile(r"^(\w+:\d+:\d+) pair (\d+) (faithful|plain): epoch ([\d.]+) s")


def epochs(path: Path) -> dict[str, dict[str, list[float]]]:
    """config -> side -> second-epoch seconds, from pairs.jsonl or from the printed log."""
    runs: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for line in path.read_text().splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            runs[row["config"]][row["side"]].append(float(row["epoch_s"]))
        elif match := LINE.match(line):
            runs[match[1]][match[3]].append(float(match[4]))
    return runs


def main(path: Path) -> int:
    print(f"{'config':<12} {'pairs':>5} {'faithful (s)':>22} {'plain (s)':>22} {'ratio':>6} {'interval':>14}  verdict")
    for config, sides in epochs(path).items():
        faithful, plain = sides["faithful"], sides["plain"]
        v = verdict(plain, faithful)
        word = {1: "faithful slower", -1: "faithful faster", 0: v.outcome}[v.direction]
        if v.outcome == "inconclusive" and v.repeats_needed:
            word += f" (about {v.repeats_needed} pairs would settle it)"
        shown = [" ".join(f"{x:.2f}" for x in side) for side in (faithful, plain)]
        print(f"{config:<12} {min(len(faithful), len(plain)):>5} {shown[0]:>22} {shown[1]:>22} {v.ratio:>6.3f} "
              f"{v.low:>6.3f}-{v.high:<7.3f}  {word}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
