#!/usr/bin/env bash
# Run 8 (issue 30, RESULTS-h100x4.md) on one box of 4 GPUs, in parts that each fit one device
# command (10 minutes); the box stays warm between them, so part 3 finds part 2's results dir.
#   bash benchmarks/run8.sh 1 OUT   # sync check (4 GPUs), then faithful vs plain interleaved (DDP, 4 GPUs)
#   bash benchmarks/run8.sh 2 OUT   # hw5 (benchmarks/h100x4-hw5.toml) through the local executor, cut at 540 s
#   bash benchmarks/run8.sh 3 OUT   # hw5's remaining cells, the fast pipeline, the all-reduce study
# OUT receives the logs and the result files (no checkpoints). Wheels in .whl/ (submitit, cloudpickle).
set -uo pipefail
PART=$1 OUT=$2
mkdir -p "$OUT"
exec > >(tee "$OUT/part$PART.log") 2>&1  # the device returns at most 8 files: logs and tarballs only
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # no NVLink multicast
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
{ date -u; cat .whl/COMMIT; nvidia-smi -L; nvidia-smi topo -m; nvidia-smi --query-gpu=driver_version --format=csv
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "cudnn", torch.backends.cudnn.version())'
  nproc; } > "$OUT/machine-part$PART.txt" 2>&1
keep() {  # the result files, plan and registry of a results dir (no checkpoints, pickles or logs)
  (cd "$1" && find . -maxdepth 1 \( -name '*.json' -o -name 'registry.jsonl' \) -print0 | tar --null -czf "$OUT/$2.tgz" -T -)
}
hw5() {  # LIMIT: run hw5's cells through the local executor for at most LIMIT seconds, then end the queue
  python3 -m orchestrator plan --study benchmarks/h100x4-hw5.toml --results runs/hw5
  timeout "$1" python3 -m orchestrator submit --study benchmarks/h100x4-hw5.toml --results runs/hw5 --executor local --wait --interval 2 "${@:2}"
  for pid in $(grep -ho '"queue_pid": *[0-9]*' runs/hw5/registry.jsonl 2>/dev/null | grep -o '[0-9]*$' | sort -u); do
    kill -KILL -- "-$pid" 2>/dev/null && echo "cut: ended the local queue $pid and the job it ran"
  done
  python3 -m orchestrator status --study benchmarks/h100x4-hw5.toml --results runs/hw5
  keep runs/hw5 hw5-results
}
case $PART in
1) python3 -m pytest -q -p no:cacheprovider tests/gpu -k "dp or ddp" 2>&1 | tail -5
   python3 benchmarks/ab_pairs.py --configs ddp:4:128,ddp:4:512,ddp:4:32 --pairs 8 --budget-s 430 \
     --out runs/ab --data /tmp/ab-data 2>&1 | grep -E "pair|budget|Error|error"
   tar -czf "$OUT/ab.tgz" runs/ab/pairs.jsonl runs/ab/*.json runs/ab/*/*.json ;;
2) hw5 540 ;;
3) hw5 240 --retry-failed
   python3 -m orchestrator plan --study benchmarks/h100x4-fast.toml --results runs/fast
   timeout 120 python3 -m orchestrator submit --study benchmarks/h100x4-fast.toml --results runs/fast --executor local --wait --interval 2
   python3 -m orchestrator collect --study benchmarks/h100x4-fast.toml --results runs/fast
   keep runs/fast fast-results
   python3 -m orchestrator plan --study allreduce --results runs/ar
   timeout 100 python3 -m orchestrator submit --study allreduce --results runs/ar --executor local --wait --interval 2
   python3 -m orchestrator collect --study allreduce --results runs/ar
   keep runs/ar allreduce-results ;;
esac
