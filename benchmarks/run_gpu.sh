#!/usr/bin/env bash
# The GPU benchmarks in one command, on a box with 4 GPUs and no SLURM (submitit's local
# executor runs the cells one at a time). From the repository root:
#   bash benchmarks/run_gpu.sh [RESULTS_DIR]
set -uo pipefail
RESULTS=${1:-runs/h200}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1  # no NVLink multicast
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi -L
python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version())'
python3 -m orchestrator plan --study benchmarks/h200.toml --results "$RESULTS"
python3 -m orchestrator submit --study benchmarks/h200.toml --results "$RESULTS" --executor local --wait --interval 2
python3 -m orchestrator status --study benchmarks/h200.toml --results "$RESULTS"
torchrun --standalone --nproc_per_node=4 benchmarks/allreduce_bench.py "$RESULTS/allreduce-plain.json"
python3 benchmarks/summarize.py "$RESULTS"
