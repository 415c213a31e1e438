#!/bin/bash
# The first run as a newcomer makes it, timed: the default study (quick) in a fresh directory,
# with the local executor (what `submit` picks where there is no sbatch), then where the time went.
#   bash benchmarks/first_run.sh DIR          (DIR must not exist; run from the repository)
# The load average before and after is printed beside the time: on a shared machine, say it.
set -euo pipefail
dir=$1
mkdir "$dir"
cd "$dir"
uptime
time (python -m orchestrator plan && python -m orchestrator submit --executor local --wait)
uptime
python -m orchestrator collect > /dev/null
sed -n "/^### Where the jobs' time went/,\$p" runs/quick/tables.md
