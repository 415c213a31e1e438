#!/usr/bin/env bash
# Run 10 (issues 46, 47, 48; RESULTS-h100x4.md) on one box of 4 GPUs, in parts that each fit one
# device command (10 minutes); the box stays warm between them, so a later part finds an earlier
# part's results dir. hw5 is orchestrator/studies/hw5.toml as shipped but for its data: synthetic
# CIFAR-10 at full size (50,000 images) with colour jitter 20 in place of the download.
#   bash benchmarks/run10.sh 1 OUT   # hw5 with one repeat, packed local executor, end to end; interference
#   bash benchmarks/run10.sh 2 OUT [TGZ]  # hw5 with one repeat resumed (`submit --retry-failed`), from part 1's
#                                         # results (TGZ, when the box went back between the parts)
#   bash benchmarks/run10.sh 3 OUT   # the ResNet-18 script vs the built-in kind on GPU 0; more interference pairs
# OUT receives the logs and the result files (no checkpoints). Wheels in .whl/ (submitit).
set -uo pipefail
PART=$1 OUT=$2
mkdir -p "$OUT"
exec > >(tee "$OUT/part$PART.log") 2>&1  # the device returns at most 8 files: logs and tarballs only
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # no NVLink multicast
export PYTHONUNBUFFERED=1 COLUMNS=100
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
{ date -u; git log -1 --format=%h 2>/dev/null || cat .whl/COMMIT; nvidia-smi -L; nvidia-smi topo -m
  nvidia-smi --query-gpu=driver_version --format=csv
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "cudnn", torch.backends.cudnn.version())'
  nproc; } > "$OUT/machine-part$PART.txt" 2>&1
study() {  # REPEATS -> the study file: hw5 as shipped, synthetic data with colour jitter 20
  sed -e 's/^dataset = "cifar10".*/dataset = "synthetic"\ncolour_jitter = 20\ntrain_images = 50000/' \
      -e "s/^repeats = 3.*/repeats = $1/" orchestrator/studies/hw5.toml > "runs/hw5-r$1.toml"
  echo "runs/hw5-r$1.toml"
}
keep() {  # the result files, plan and registry of a results dir (no checkpoints, pickles or logs)
  (cd "$1" && find . -maxdepth 1 \( -name '*.json' -o -name 'registry.jsonl' \) -print0 | tar --null -czf "$OUT/$2.tgz" -T -)
}
hw5() {  # REPEATS LIMIT: plan hw5 with REPEATS, run its due cells for at most LIMIT s, then end the queue
  local s; mkdir -p runs; s=$(study "$1")
  python3 -m orchestrator plan --study "$s" --results runs/hw5 | tail -4
  local t0=$SECONDS
  timeout "$2" python3 -m orchestrator submit --study "$s" --results runs/hw5 --executor local --wait --interval 5 "${@:3}" | tail -3
  echo "hw5 (repeats $1): submit --wait ended after $((SECONDS - t0)) s"
  for pid in $(grep -ho '"queue_pid": *[0-9]*' runs/hw5/registry.jsonl 2>/dev/null | grep -o '[0-9]*$' | sort -u); do
    kill -KILL -- "-$pid" 2>/dev/null && echo "cut: ended the local queue $pid and the jobs it ran"
  done
  python3 -m orchestrator status --study "$s" --results runs/hw5 | tail -8
  python3 -m orchestrator collect --study "$s" --results runs/hw5 > "$OUT/collect-part$PART.txt" 2>&1
  keep runs/hw5 "hw5-part$PART"
}
case $PART in
1) hw5 1 330
   python3 benchmarks/interference.py --out runs/interference --budget-s 170 --pairs 3 --images 10000 2>&1 | tail -12
   cp runs/interference/interference.json "$OUT/" ;;
2) if [ -n "${3:-}" ]; then mkdir -p runs/hw5 && tar -xzf "$3" -C runs/hw5; fi
   hw5 1 420 --retry-failed ;;
3) CUDA_VISIBLE_DEVICES=0 timeout 230 bash benchmarks/command_vs_builtin.sh runs/cvb 2>&1 | tail -12
   python3 benchmarks/interference.py --out runs/interference2 --budget-s 100 --pairs 2 --images 10000 2>&1 | tail -8
   cp runs/interference2/interference.json "$OUT/interference-part3.json" ;;
esac
