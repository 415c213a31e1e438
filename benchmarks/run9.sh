#!/usr/bin/env bash
# Run 9 (issue 40, RESULTS-h100x2.md) on one box of 2 GPUs (no 4-GPU kind was lent): faithful vs
# plain DDP, interleaved, at 2 x 128 and 2 x 512, in parts that each fit one device command; the
# box stays warm between them, so each part writes runs/abPART/ and
# the summary reads every part's pairs.
#   bash benchmarks/run9.sh PART OUT [BUDGET_S]   # PART 1: the sync check on 2 GPUs, then pairs; 2, 3: more pairs
# OUT receives the log, the machine and pairs.jsonl. Wheels in .whl/ (submitit, cloudpickle).
set -uo pipefail
PART=$1 OUT=$2 BUDGET=${3:-470}
mkdir -p "$OUT"
exec > >(tee "$OUT/part$PART.log") 2>&1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # no NVLink multicast
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
{ date -u; git log -1 --format=%h 2>/dev/null || cat .whl/COMMIT; nvidia-smi -L; nvidia-smi topo -m
  nvidia-smi --query-gpu=driver_version --format=csv
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "cudnn", torch.backends.cudnn.version())'
  nproc; } > "$OUT/machine-part$PART.txt" 2>&1
if [ "$PART" = 1 ]; then
  python3 -m pytest -q -p no:cacheprovider tests/gpu 2>&1 | tail -5
fi
python3 benchmarks/ab_pairs.py --configs ddp:2:128,ddp:2:512 --pairs 40 --budget-s "$BUDGET" \
  --out runs/ab$PART --data /tmp/ab-data 2>&1 | grep -E "pair|budget|Error|error"
cat runs/ab*/pairs.jsonl > "$OUT/pairs.jsonl"  # every part so far: the pairs of one box
python3 benchmarks/ab_summary.py "$OUT/pairs.jsonl"
