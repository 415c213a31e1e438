#!/usr/bin/env bash
# Test-set evaluation in training runs on one GPU: benchmarks/eval-gpu.toml through plan ->
# submit --executor local -> collect, then each epoch's time, evaluation time and test accuracy.
#   bash benchmarks/run_eval_gpu.sh [RESULTS_DIR]
set -uo pipefail
RESULTS=${1:-runs/eval-gpu}
STUDY=benchmarks/eval-gpu.toml
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi -L
# the folder a 50,000-image synthetic cell reads, written with a 10,000-image test batch
python3 -m jobs.data --synthetic data/synthetic-cifar10-50000-s0 --images 50000 --test-images 10000 > /dev/null
python3 -m orchestrator plan --study "$STUDY" --results "$RESULTS" > /dev/null
timeout 480 python3 -m orchestrator submit --study "$STUDY" --results "$RESULTS" --executor local --wait --interval 2
python3 -m orchestrator collect --study "$STUDY" --results "$RESULTS" > "$RESULTS/collect.txt"
python3 - "$RESULTS" <<'PY'
import json, sys
from pathlib import Path
from jobs.layout import result_files
for path in result_files(Path(sys.argv[1])):
    r = json.loads(path.read_text())
    c = r["cell"]
    print(f"{c['pipeline']} b{c['batch_per_gpu']} test_images={c.get('test_images', 10000)} {r['status']} "
          f"{r['env']['gpu_model']}")
    for e in r["epochs"]:
        acc = "-" if e.get("test_accuracy") is None else f"{100 * e['test_accuracy']:.2f}%"
        evs = "-" if e.get("eval_s") is None else f"{e['eval_s']:.3f}"
        print(f"  epoch {e['epoch']}: epoch_s {e['epoch_s']:.3f} train_s {e['train_s']:.3f} eval_s {evs} "
              f"test images {e.get('test_images')} test acc {acc}")
PY
