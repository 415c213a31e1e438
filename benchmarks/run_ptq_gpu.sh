#!/usr/bin/env bash
# The PTQ study on a GPU box without SLURM, through the real path (plan -> submit --executor
# local -> the job -> collect), then its timings from the result file. From the repository root:
#   bash benchmarks/run_ptq_gpu.sh [RESULTS_DIR] [STUDY]
set -uo pipefail
RESULTS=${1:-runs/ptq-gpu}
STUDY=${2:-benchmarks/ptq-gpu.toml}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
nvidia-smi -L
python3 -m orchestrator plan --study "$STUDY" --results "$RESULTS"
start=$(date +%s.%N)
python3 -m orchestrator submit --study "$STUDY" --results "$RESULTS" --executor local --wait --interval 2
echo "submit --wait: $(python3 -c "print(round($(date +%s.%N) - $start, 1))") s (data written on first use, two trainings, the sweep)"
python3 -m orchestrator collect --study "$STUDY" --results "$RESULTS"
python3 benchmarks/ptq_timings.py "$RESULTS"
