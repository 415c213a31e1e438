#!/usr/bin/env bash
# Run 13 (issue 44; RESULTS-h200x4.md) on one box of 4 GPUs: hw5 with one repeat, every cell alone on
# the box (`submit --exclusive`), so that no timing ran beside another cell (run 12 packed them). In
# two parts that each fit one device command (10 minutes); the second resumes the first's results.
#   bash benchmarks/run13.sh 1 OUT          # hw5, one repeat, --exclusive, for at most 520 s
#   bash benchmarks/run13.sh 2 OUT TGZ      # resumed from part 1's results (`submit --retry-failed`)
# OUT receives the logs and the result files (no checkpoints). Wheels in .whl/ (submitit).
set -uo pipefail
PART=$1 OUT=$2
source "$(dirname "$0")/device_hw5.sh"  # the environment, data, study, keep, hw5
case $PART in
1) data; hw5 1 520 --exclusive ;;
2) mkdir -p runs/hw5 && tar -xzf "$3" -C runs/hw5
   data; hw5 1 520 --exclusive --retry-failed ;;
esac
