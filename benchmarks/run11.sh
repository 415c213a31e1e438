#!/usr/bin/env bash
# Run 11 (issue 46; RESULTS-h200x4.md) on one box of 4 GPUs, in parts that each fit one device
# command (10 minutes). hw5 is orchestrator/studies/hw5.toml as shipped but for its data: synthetic
# CIFAR-10 at full size (50,000 images) with colour jitter 20 in place of the download, written
# before the clock starts (as CIFAR-10 is downloaded once before a study).
#   bash benchmarks/run11.sh 1 OUT        # hw5 with one repeat, packed local executor, end to end
#   bash benchmarks/run11.sh 2 OUT [TGZ]  # hw5 resumed (`submit --retry-failed`) from part 1's results (TGZ,
#                                         # when the box went back), then interference pairs of the classes
#                                         # run 10 left inconclusive (1 GPU batch 512, 2-GPU DDP batch 128)
#   bash benchmarks/run11.sh 2gpu OUT     # on a box of 2 GPUs: hw5's cells of 1 and 2 GPUs end to end; then
#                                         # 1-GPU batch 512 alone against two side by side
# OUT receives the logs and the result files (no checkpoints). Wheels in .whl/ (submitit).
set -uo pipefail
PART=$1 OUT=$2
source "$(dirname "$0")/device_hw5.sh"  # the environment, data, study, keep, hw5
case $PART in
1) data; hw5 1 540 ;;
2) if [ -n "${3:-}" ]; then mkdir -p runs/hw5 && tar -xzf "$3" -C runs/hw5; fi
   data; hw5 1 330 --retry-failed
   python3 benchmarks/interference.py --out runs/interference --budget-s 200 --pairs 6 --images 10000 \
     --batch 512 --batch 128 2>&1 | tail -8
   cp runs/interference/interference.json "$OUT/" ;;
2gpu) data; hw5 1 360
   python3 benchmarks/interference.py --out runs/interference --budget-s 150 --pairs 6 --images 10000 \
     --batch 512 2>&1 | tail -6
   cp runs/interference/interference.json "$OUT/" ;;
esac
