#!/usr/bin/env bash
# Bring up the project's private SLURM test cluster on this one machine.
#
#   tests/cluster/start.sh [DIR]        (root only; DIR defaults to /tmp/orchestrator-slurm)
#
# Two "nodes", n1 and n2, are two slurmd processes on this host (Debian's slurmd
# is built with MULTIPLE_SLURMD). Each advertises 4 CPUs and 4 fake GPUs (gres
# files are symlinks to /dev/null). Partitions: debug (default, no time limit)
# and short (10 minutes). No systemd is needed: every daemon is started here
# and tracked by a pid file under DIR, so stop.sh can stop exactly those.
#
# Safe to run again: missing packages are installed, daemons that are already
# up are left alone, and if the generated configuration differs from the one
# in DIR/etc the cluster is stopped and started again with the new one.
#
# Environment:
#   ORCH_SLURM_ACCOUNTING=1   1: private mariadb + slurmdbd, so sacct works;
#                             0: accounting_storage/none (sacct then fails)
#   ORCH_SLURM_TIMEOUT=120    seconds to wait for each daemon / the nodes
#   ORCH_SLURM_PORT=16900     slurmctld port; slurmdbd +1, mariadb +2, slurmd nI +10+I
set -euo pipefail

DIR=$(realpath -m "${1:-/tmp/orchestrator-slurm}")
ACCT=${ORCH_SLURM_ACCOUNTING:-1}
TIMEOUT=${ORCH_SLURM_TIMEOUT:-120}
PORT=${ORCH_SLURM_PORT:-16900}
NODES=(n1 n2)
CPUS=16  # advertised, like a GPU node: `quick` asks 2 tasks x 3 CPUs (loader workers + 1)
GPUS=4
CLUSTER=orchestrator
HERE=$(dirname "$(realpath "$0")")

T0=${EPOCHREALTIME/[^0-9]/}
log() {
  local us=$(( ${EPOCHREALTIME/[^0-9]/} - T0 ))
  printf '[cluster %4d.%01ds] %s\n' $((us / 1000000)) $((us / 100000 % 10)) "$*"
}
die() { log "FAILED: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "start.sh must run as root"
[ "$DIR" != / ] || die "refusing DIR=/"
case $ACCT in 0|1) ;; *) die "ORCH_SLURM_ACCOUNTING must be 0 or 1, not '$ACCT'" ;; esac
log "cluster dir $DIR, accounting=$ACCT"

# --- packages ---------------------------------------------------------------
# All of them, whatever ACCT says, so that toggling accounting never installs.
PKGS=(munge slurmctld slurmd slurm-client slurmdbd mariadb-server)
need=()
for p in "${PKGS[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || need+=("$p")
done
if [ ${#need[@]} -gt 0 ]; then
  log "installing ${need[*]}"
  # Package scripts must not start system-wide munge/slurm/mariadb daemons:
  # a policy-rc.d that says "no" (exit 101) prevents that, with or without systemd.
  own_policy=0
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    own_policy=1
  fi
  rc=0
  {
    DEBIAN_FRONTEND=noninteractive apt-get update -q &&
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${need[@]}"
  } > "/tmp/orchestrator-slurm-apt.log" 2>&1 || rc=$?
  [ $own_policy = 0 ] || rm -f /usr/sbin/policy-rc.d
  [ $rc = 0 ] || { tail -n 30 /tmp/orchestrator-slurm-apt.log >&2; die "apt-get failed (rc=$rc)"; }
  log "installed $(slurmctld -V)"
fi

# --- helpers ----------------------------------------------------------------
# alive PIDFILE NAME: the pid in PIDFILE is a live process called NAME.
# A zombie counts as dead: kill -0 succeeds on it, but it is gone (this VM's
# init can be slow to reap).
alive() {
  local pid stat
  pid=$(cat "$1" 2>/dev/null) || return 1
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  [ "${stat:0:1}" != Z ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = "$2" ]
}
# await WHAT CMD...: retry CMD until it succeeds or TIMEOUT runs out.
await() {
  local what=$1 end=$((SECONDS + TIMEOUT)); shift
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt "$end" ] || { "$@" || true; die "$what not ready after ${TIMEOUT}s"; }
    sleep 0.2
  done
  log "$what ready"
}

mkdir -p "$DIR"/{etc,run,log,state,gpu} "${NODES[@]/#/$DIR/spool/}"
chmod 755 "$DIR"
for i in $(seq 0 $((GPUS - 1))); do ln -sfn /dev/null "$DIR/gpu/nvidia$i"; done

# munged refuses a socket directory that others cannot traverse: it must be 755.
MUNGE=$DIR/munge
SOCK=$MUNGE/munge.socket
install -d -m 755 -o munge -g munge "$MUNGE"
if [ ! -s "$MUNGE/munge.key" ]; then
  mungekey --create --keyfile="$MUNGE/munge.key"
  chown munge:munge "$MUNGE/munge.key"
  chmod 600 "$MUNGE/munge.key"
fi

MEM=$(awk '/^MemTotal:/ {print int($2 / 1024)}' /proc/meminfo)

# --- configuration ----------------------------------------------------------
NEW=$DIR/etc.new
rm -rf "$NEW"; mkdir -p "$NEW"

cat > "$NEW/slurm.conf" <<EOF
# Written by tests/cluster/start.sh; rewritten on every run.
ClusterName=$CLUSTER
SlurmctldHost=localhost
SlurmctldPort=$PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
# cred_expire: a requeued job waits this long before it may start again
# (default 120 s); short, so that the requeue tests do not idle for minutes.
AuthInfo=socket=$SOCK,cred_expire=10
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
# No cgroup confinement: linuxproc/none work in VMs and containers alike, and
# allow advertising more CPUs than the host really has.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
# Accept the configured CPUs/GPUs/memory as they are written below, and let
# several slurmd run on one host.
SlurmdParameters=config_overrides
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
InactiveLimit=0
KillWait=5
MinJobAge=300
SlurmctldTimeout=30
SlurmdTimeout=30
MaxArraySize=1001
# Reject at submission a job that asks for more than its partition allows
# (e.g. --time=20 on 'short'), instead of leaving it pending forever.
EnforcePartLimits=ALL
JobCompType=jobcomp/none
GresTypes=gpu
EOF
if [ "$ACCT" = 1 ]; then
  cat >> "$NEW/slurm.conf" <<EOF
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=localhost
AccountingStoragePort=$((PORT + 1))
# AuthInfo above does not apply to slurmdbd connections; this is what points
# them at our private munge socket.
AccountingStoragePass=$SOCK
# The fake GPUs are allocated like real ones; tracked, sacct's AllocTRES names them (gres/gpu=N),
# which is what the orchestrator charges GPU-hours by.
AccountingStorageTRES=gres/gpu
JobAcctGatherType=jobacct_gather/linux
EOF
else
  cat >> "$NEW/slurm.conf" <<EOF
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
EOF
fi
i=0
for n in "${NODES[@]}"; do
  i=$((i + 1))
  echo "NodeName=$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((PORT + 10 + i))" \
       "CPUs=$CPUS Sockets=1 CoresPerSocket=$CPUS ThreadsPerCore=1 RealMemory=$MEM" \
       "Gres=gpu:$GPUS State=UNKNOWN" >> "$NEW/slurm.conf"
done
NODELIST=$(IFS=,; echo "${NODES[*]}")
cat >> "$NEW/slurm.conf" <<EOF
PartitionName=debug Nodes=$NODELIST Default=YES MaxTime=INFINITE State=UP
PartitionName=short Nodes=$NODELIST MaxTime=10 State=UP
EOF

# A gpu gres without File= is dropped by slurmd (node goes INVAL); /dev/null
# is a character device, so it satisfies the check without any warning.
printf 'AutoDetect=off\nNodeName=%s Name=gpu File=%s/gpu/nvidia[0-%d]\n' \
  "$NODELIST" "$DIR" $((GPUS - 1)) > "$NEW/gres.conf"

# slurmd always loads a cgroup plugin in 22.05. A cgroup-v1/hybrid host needs no
# cgroup.conf; a pure v2 host without systemd would need this (untested here).
if [ "$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)" = cgroup2fs ]; then
  printf 'CgroupPlugin=cgroup/v2\nIgnoreSystemd=yes\nCgroupAutomount=yes\n' > "$NEW/cgroup.conf"
fi

if [ "$ACCT" = 1 ]; then
  cat > "$NEW/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$SOCK
DbdHost=localhost
DbdPort=$((PORT + 1))
SlurmUser=root
LogFile=$DIR/log/slurmdbd.log
PidFile=$DIR/run/slurmdbd.pid
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$((PORT + 2))
StorageUser=slurm
StoragePass=slurm
StorageLoc=slurm_acct_db
EOF
  chmod 600 "$NEW/slurmdbd.conf"   # slurmdbd insists on this
fi

if diff -rq "$NEW" "$DIR/etc" >/dev/null 2>&1; then
  rm -rf "$NEW"
else
  if compgen -G "$DIR/run/*.pid" >/dev/null || [ -s "$MUNGE/munged.pid" ]; then
    log "configuration changed: stopping the running cluster first"
    bash "$HERE/stop.sh" "$DIR"
  fi
  rm -rf "${DIR:?}/etc"
  mv "$NEW" "$DIR/etc"
  log "configuration written to $DIR/etc"
fi

export SLURM_CONF=$DIR/etc/slurm.conf
echo "export SLURM_CONF=$SLURM_CONF" > "$DIR/env.sh"

# Plain `sinfo` etc. without SLURM_CONF: otherwise clients fall back to a DNS
# SRV lookup and die with "Could not establish a configuration source".
mkdir -p /etc/slurm
if [ -L /etc/slurm/slurm.conf ] || [ ! -e /etc/slurm/slurm.conf ]; then
  ln -sfn "$SLURM_CONF" /etc/slurm/slurm.conf
else
  log "warning: /etc/slurm/slurm.conf is a real file, left alone; use $DIR/env.sh"
fi

# Node names must resolve: DDP jobs use the first node name as MASTER_ADDR.
# Rewritten in place (not replaced), because /etc/hosts may be a bind mount.
missing=()
for n in "${NODES[@]}"; do getent hosts "$n" >/dev/null || missing+=("$n"); done
if [ ${#missing[@]} -gt 0 ]; then
  echo "127.0.0.1 ${missing[*]} # orchestrator-slurm $DIR" >> /etc/hosts
  log "added '127.0.0.1 ${missing[*]}' to /etc/hosts"
fi

# --- daemons ----------------------------------------------------------------
if alive "$MUNGE/munged.pid" munged; then
  log "munged already running"
else
  runuser -u munge -- munged --socket="$SOCK" --key-file="$MUNGE/munge.key" \
    --pid-file="$MUNGE/munged.pid" --log-file="$MUNGE/munged.log" --seed-file="$MUNGE/munged.seed"
  await munged munge -S "$SOCK" -n
fi

if [ "$ACCT" = 1 ]; then
  DB=(--no-defaults --user=root --datadir="$DIR/mysql")
  DBSOCK=$DIR/run/mysqld.sock
  if alive "$DIR/run/mysqld.pid" mariadbd; then
    log "mariadbd already running"
  else
    if [ ! -d "$DIR/mysql/mysql" ]; then
      rm -rf "$DIR/mysql"
      mariadb-install-db "${DB[@]}" --skip-test-db --auth-root-authentication-method=socket \
        > "$DIR/log/mariadb-install.log" 2>&1 || { tail "$DIR/log/mariadb-install.log" >&2; die "mariadb-install-db"; }
      log "mariadb data directory created"
    fi
    setsid mariadbd "${DB[@]}" --socket="$DBSOCK" --pid-file="$DIR/run/mysqld.pid" \
      --bind-address=127.0.0.1 --port=$((PORT + 2)) --log-error="$DIR/log/mariadb.log" \
      --innodb-buffer-pool-size=128M --innodb-lock-wait-timeout=900 \
      < /dev/null > /dev/null 2>&1 &
    await mariadbd mariadb-admin --no-defaults -S "$DBSOCK" -u root ping
  fi
  mariadb --no-defaults -S "$DBSOCK" -u root <<'EOF'
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'localhost' IDENTIFIED BY 'slurm';
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'slurm';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'localhost';
GRANT ALL ON slurm_acct_db.* TO 'slurm'@'127.0.0.1';
EOF
  if alive "$DIR/run/slurmdbd.pid" slurmdbd; then
    log "slurmdbd already running"
  else
    # slurmdbd finds slurmdbd.conf next to $SLURM_CONF.
    slurmdbd < /dev/null >> "$DIR/log/slurmdbd.out" 2>&1
    await slurmdbd sacctmgr -n list cluster
  fi
fi

if alive "$DIR/run/slurmctld.pid" slurmctld; then
  log "slurmctld already running"
else
  slurmctld -f "$SLURM_CONF" < /dev/null >> "$DIR/log/slurmctld.out" 2>&1
  await slurmctld bash -c 'scontrol ping | grep -q UP'
fi

for n in "${NODES[@]}"; do
  if alive "$DIR/run/slurmd-$n.pid" slurmd; then
    log "slurmd $n already running"
  else
    slurmd -f "$SLURM_CONF" -N "$n" < /dev/null >> "$DIR/log/slurmd-$n.out" 2>&1
    log "slurmd $n started"
  fi
done

# Every node must be usable in both partitions. Nodes left down/drained by an
# earlier run are resumed once.
nodes_up() {
  local states
  states=$(sinfo -h -N -o '%P %N %T' 2>/dev/null) || return 1
  [ "$(grep -cE '^(debug\*|short) ' <<< "$states")" = $((2 * ${#NODES[@]})) ] || return 1
  ! grep -qvE ' (idle|mixed|allocated|completing)$' <<< "$states"
}
end=$((SECONDS + TIMEOUT)); resumed=0
until nodes_up; do
  if [ $SECONDS -ge $end ]; then sinfo -N -l >&2 || true; die "nodes not idle after ${TIMEOUT}s"; fi
  if [ $resumed = 0 ] && sinfo -h -N -o '%T' 2>/dev/null | grep -qE '^(down|drain|drained|draining|inval)'; then
    sleep 1
    scontrol update NodeName="$NODELIST" State=RESUME 2>/dev/null || true
    resumed=1
  fi
  sleep 0.2
done
log "nodes up: $(sinfo -h -N -o '%N/%P=%T' | sort -u | tr '\n' ' ')"

if [ "$ACCT" = 1 ]; then
  # slurmctld registers the cluster in slurmdbd by itself shortly after it starts.
  await "cluster registration" bash -c "sacctmgr -n -P list cluster format=cluster | grep -qx $CLUSTER"
  await sacct sacct -n -X -o JobID
fi
log "cluster up (source $DIR/env.sh, or use /etc/slurm/slurm.conf)"
