#!/usr/bin/env bash
# The GPU benchmarks in one command, on a GPU box without SLURM (submitit's local executor
# runs the cells one at a time). From the repository root:
#   bash benchmarks/run_gpu.sh [RESULTS_DIR] [STUDY] [GPUS]
# 1. the GPU tests (tests/gpu): every engine's timed steps under torch's sync debug mode, the PTQ core on CUDA;
# 2. the study's cells; 3. the plain homework loop for each faithful configuration, as many
# times as the study repeats it; 4. a plain all-reduce on 2+ GPUs; 5. the tables.
# SKIP_SYNC_CHECK=1 leaves out step 1 (a box where it already ran); BENCH_WAIT_S bounds step 2.
set -uo pipefail
RESULTS=${1:-runs/h200}
STUDY=${2:-benchmarks/h200.toml}
GPUS=${3:-4}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # no NVLink multicast
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi -L
python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
if [ "${SKIP_SYNC_CHECK:-0}" != 1 ]; then
  python3 -m pytest -q -p no:cacheprovider tests/gpu || echo "GPU TESTS FAILED"
fi
python3 -m orchestrator plan --study "$STUDY" --results "$RESULTS"
# bounded, so that a stuck cell still leaves the status and the summary below
timeout "${BENCH_WAIT_S:-480}" python3 -m orchestrator submit --study "$STUDY" --results "$RESULTS" --executor local --wait --interval 2
python3 -m orchestrator status --study "$STUDY" --results "$RESULTS"
python3 benchmarks/reference_runs.py "$RESULTS"
if [ "$GPUS" -gt 1 ]; then
  torchrun --standalone --nproc_per_node="$GPUS" benchmarks/allreduce_bench.py "$RESULTS/allreduce-plain.json"
fi
python3 benchmarks/summarize.py "$RESULTS"
