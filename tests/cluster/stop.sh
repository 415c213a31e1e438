#!/usr/bin/env bash
# Stop the test cluster that tests/cluster/start.sh brought up.
#
#   tests/cluster/stop.sh [DIR] [--purge]      (DIR defaults to /tmp/orchestrator-slurm)
#
# Cancels all jobs, then stops the daemons whose pid files live under DIR, and
# nothing else: each pid is checked (name, not a zombie, started for DIR)
# before it is signalled. --purge also deletes DIR, our /etc/hosts line and
# the /etc/slurm/slurm.conf link.
set -uo pipefail

DIR=; PURGE=0
for arg in "$@"; do
  case $arg in
    --purge) PURGE=1 ;;
    -*) echo "usage: $0 [DIR] [--purge]" >&2; exit 2 ;;
    *) DIR=$arg ;;
  esac
done
DIR=$(realpath -m "${DIR:-/tmp/orchestrator-slurm}")
log() { echo "[cluster stop] $*"; }
[ "$DIR" != / ] || { log "refusing DIR=/"; exit 2; }

# running PID: exists and is not a zombie (this VM's init reaps late).
running() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat:0:1}" != Z ]
}
ours() {  # ours PID: its command line or SLURM_CONF points into DIR
  tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null | grep -qF "$DIR/" ||
    tr '\0' '\n' < "/proc/$1/environ" 2>/dev/null | grep -qxF "SLURM_CONF=$DIR/etc/slurm.conf"
}
# halt PIDFILE NAME [GRACE]: SIGTERM, then SIGKILL after GRACE seconds.
halt() {
  local file=$1 name=$2 grace=${3:-20} pid n
  [ -e "$file" ] || return 0
  pid=$(cat "$file" 2>/dev/null)
  if [[ $pid =~ ^[0-9]+$ ]] && running "$pid"; then
    if [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$name" ] && ours "$pid"; then
      kill -TERM "$pid" 2>/dev/null
      for ((n = 0; n < grace * 10; n++)); do running "$pid" || break; sleep 0.1; done
      if running "$pid"; then
        log "$name ($pid) still up after ${grace}s, sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null; sleep 0.3
      fi
      log "stopped $name ($pid)"
    else
      log "pid $pid in $file is not our $name; not touching it"
    fi
  fi
  rm -f "$file"
}

if [ -d "$DIR" ]; then
  export SLURM_CONF=$DIR/etc/slurm.conf
  if [ -e "$SLURM_CONF" ] && [ -s "$DIR/run/slurmctld.pid" ] && running "$(cat "$DIR/run/slurmctld.pid")"; then
    ids=$(timeout 10 squeue -h -o %A 2>/dev/null | sort -u | tr '\n' ' ')
    if [ -n "${ids// /}" ]; then
      log "cancelling jobs $ids"
      # shellcheck disable=SC2086
      timeout 10 scancel $ids 2>/dev/null
      for ((n = 0; n < 150; n++)); do
        [ -z "$(timeout 5 squeue -h -o %A 2>/dev/null)" ] && break
        sleep 0.2
      done
    fi
  fi
  for f in "$DIR"/run/slurmd-*.pid; do halt "$f" slurmd; done
  halt "$DIR/run/slurmctld.pid" slurmctld
  halt "$DIR/run/slurmdbd.pid" slurmdbd
  halt "$DIR/run/mysqld.pid" mariadbd 60
  halt "$DIR/munge/munged.pid" munged
fi

if [ $PURGE = 1 ]; then
  if [ -L /etc/slurm/slurm.conf ] && [ "$(readlink /etc/slurm/slurm.conf)" = "$DIR/etc/slurm.conf" ]; then
    rm -f /etc/slurm/slurm.conf
    log "removed /etc/slurm/slurm.conf link"
  fi
  tag="# orchestrator-slurm $DIR"
  if grep -qF "$tag" /etc/hosts 2>/dev/null; then
    kept=$(grep -vF "$tag" /etc/hosts)
    printf '%s\n' "$kept" > /etc/hosts   # in place: /etc/hosts may be a bind mount
    log "removed our /etc/hosts line"
  fi
  rm -rf "$DIR"
  log "removed $DIR"
fi
exit 0
