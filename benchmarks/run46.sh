#!/usr/bin/env bash
# Issue 46 on one box of 4 GPUs, in parts that each fit one device command (10 minutes):
#   bash benchmarks/run46.sh 1 OUT   # interference: alone vs packed, interleaved (benchmarks/interference.py, ~6 min)
#   bash benchmarks/run46.sh 2 OUT   # hw5 with one repeat (benchmarks/h100x4-hw5.toml) packed on the 4 GPUs, cut at 540 s
# OUT receives the logs, interference.json and the result files. Wheels in .whl/ (submitit, cloudpickle), as run 8.
set -uo pipefail
PART=$1 OUT=$2
mkdir -p "$OUT"
exec > >(tee "$OUT/part$PART.log") 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # no NVLink multicast
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
{ date -u; git rev-parse HEAD 2>/dev/null || cat .whl/COMMIT; nvidia-smi -L; nvidia-smi topo -m; nproc; } > "$OUT/machine-part$PART.txt" 2>&1
case $PART in
1) python3 benchmarks/interference.py --out runs/interference --pairs 3 --budget-s 360 2>&1 | grep -v "^\["
   cp runs/interference/interference.json "$OUT/" ;;
2) python3 -m orchestrator plan --study benchmarks/h100x4-hw5.toml --results runs/hw5
   time timeout 540 python3 -m orchestrator submit --study benchmarks/h100x4-hw5.toml --results runs/hw5 --executor local --wait --interval 2
   python3 -m orchestrator status --study benchmarks/h100x4-hw5.toml --results runs/hw5
   python3 -m orchestrator collect --study benchmarks/h100x4-hw5.toml --results runs/hw5 --tables | sed -n "/time went/,\$p" | head -40
   grep -h "started local job\|ended" runs/hw5/logs/local-queue.log | head -80
   (cd runs/hw5 && find . -maxdepth 1 \( -name '*.json' -o -name 'registry.jsonl' \) -print0 | tar --null -czf "$OUT/hw5-results.tgz" -T -) ;;
esac
