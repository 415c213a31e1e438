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
source "$(dirname "$0")/device_hw5.sh"  # the environment, study, keep, hw5
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
