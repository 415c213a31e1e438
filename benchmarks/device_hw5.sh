# What benchmarks/run10.sh and run11.sh share (sourced after they set PART and OUT): the device's
# environment and machine file, hw5's synthetic data, its study file, a run of it, and its results kept.
# shellcheck shell=bash
mkdir -p "$OUT"
exec > >(tee "$OUT/part$PART.log") 2>&1  # the device returns at most 8 files: logs and tarballs only
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # no NVLink multicast
export PYTHONUNBUFFERED=1 COLUMNS=100
python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl >/dev/null 2>&1
export PYTHONPATH=$PWD:/tmp/site
{ date -u; cat .whl/COMMIT 2>/dev/null || git log -1 --format=%h; nvidia-smi -L; nvidia-smi topo -m
  nvidia-smi --query-gpu=driver_version --format=csv
  python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "cudnn", torch.backends.cudnn.version())'
  nproc; } > "$OUT/machine-part$PART.txt" 2>&1
data() {  # hw5's synthetic set, written once before anything is timed
  local t0=$SECONDS
  python3 -c 'from pathlib import Path
from jobs.runtime.data import SyntheticSpec, dataset_root, ensure_synthetic
from jobs.train.cell import Cell
cell = Cell(engine="single", batch_per_gpu=128, dataset="synthetic", train_images=50000, colour_jitter=20.0, seed=0)
spec = SyntheticSpec.of(cell)
ensure_synthetic(dataset_root(cell, Path("data")), spec.train_images, spec.seed, spec.test_images, spec.colour_jitter)
print(dataset_root(cell, Path("data")))'
  echo "data written in $((SECONDS - t0)) s (not timed below)"
}
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
