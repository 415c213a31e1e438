"""The timings of each PTQ result in a results dir: training per network, profiling, the sweep.

    python benchmarks/ptq_timings.py RESULTS_DIR
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

from jobs.core.layout import result_files


def main(results_dir: str) -> None:
    for path in result_files(Path(results_dir)):
        data = json.loads(path.read_text())
        if data["cell"].get("kind") != "ptq" or not data.get("ptq"):
            continue
        outcome, env = data["ptq"]["outcome"], data["env"]
        print(f"{path.name}: {env['gpu_model']}, {data['cell']['train_images']} train / "
              f"{data['cell']['test_images']} test images")
        for t in data["ptq"]["training"]:
            print(f"  train {t['model']}: {t['train_s']:.2f} s ({t['device']}, CUDA graph {t['cuda_graph']}, "
                  f"reused {t['reused']}); epoch losses {', '.join(f'{x:.3f}' for x in t['epoch_losses'])}")
        variants = outcome["variants"]
        evals = sum(v["eval_s"] for v in variants)
        integer = sum(v["integer_s"] for v in variants)
        print(f"  run_ptq: {outcome['total_s']:.2f} s for {len(variants)} variants (profile {outcome['profile_s']:.2f} s, "
              f"evaluations {evals:.2f} s, integer-only runs {integer:.2f} s)")


if __name__ == "__main__":
    main(sys.argv[1])
