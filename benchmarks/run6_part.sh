#!/usr/bin/env bash
# One part of run 6 (issue 23, RESULTS-h200.md) inside a fixed time, so that several parts fit
# one device lease:   bash benchmarks/run6_part.sh LIMIT_S RESULTS STUDY GPUS
# run_gpu.sh (no sync check: that is run once, on its own) bounded by LIMIT_S. If the limit
# cuts it, the local queue it started (its own session, so `timeout` does not reach it) is
# ended by the pid the registry records, with the job it runs, so the next part times alone;
# then the status and the summary of what finished.
set -u
LIMIT=$1 RESULTS=$2 STUDY=$3 GPUS=$4
SKIP_SYNC_CHECK=1 BENCH_WAIT_S=$LIMIT timeout "$LIMIT" bash benchmarks/run_gpu.sh "$RESULTS" "$STUDY" "$GPUS"
code=$?
echo "run_gpu.sh exit $code"
if [ "$code" = 124 ]; then
  for pid in $(grep -ho '"queue_pid": *[0-9]*' "$RESULTS/registry.jsonl" 2>/dev/null | grep -o '[0-9]*$' | sort -u); do
    kill -KILL -- "-$pid" 2>/dev/null && echo "cut at ${LIMIT}s: ended the local queue $pid and the job it ran"
  done
  export PYTHONPATH=$PWD${PYTHONPATH:+:$PYTHONPATH}
  python3 -m orchestrator status --study "$STUDY" --results "$RESULTS"
  python3 benchmarks/summarize.py "$RESULTS"
fi
