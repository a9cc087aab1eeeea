#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the Slurm executor's tests and for trying
# `cuda-optimizer serve --executor slurm` by hand: Debian's slurm-wlm (slurmctld + slurmd) and
# munge, every state, spool, log, pid and socket file under DIR, free ports, and two stand-in
# GPUs (gres gpu:2) so that `sbatch --gres=gpu:1` is really scheduled against something.
#
#   tools/slurm-cluster.sh start DIR    writes DIR/slurm.conf, starts munged, slurmctld and
#                                       slurmd, waits until the node is idle, and prints
#                                       `export SLURM_CONF=DIR/slurm.conf`
#   tools/slurm-cluster.sh status DIR   the daemons' pids and sinfo
#   tools/slurm-cluster.sh stop DIR     cancels the cluster's jobs and stops its daemons
#
# Runs as root (SlurmUser root), with or without systemd; needs: apt-get install slurm-wlm munge.
set -euo pipefail

usage() {
  echo "usage: $0 start|stop|status DIR" >&2
  exit 64
}
(($# == 2)) || usage
action=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd)
conf=$dir/slurm.conf
export SLURM_CONF=$conf
wait_s=${SLURM_CLUSTER_WAIT_S:-30}

die() {
  echo "slurm-cluster: $*" >&2
  exit 1
}

# A TCP port no socket holds (checked against /proc/net/tcp*, which needs no ss or netstat),
# and the one after it free as well: SlurmctldPort, SlurmdPort. Both lie below the kernel's
# ephemeral range, so an outgoing connection (another test's cluster, munge) cannot take one
# between this check and the daemons' bind.
free_port_pair() {
  local taken port low span
  local _sl local_address _rest
  low=$(awk '{ print $1 }' /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
  span=$((low - 20002))
  ((span > 1000)) || span=30000
  taken=$({ cat /proc/net/tcp /proc/net/tcp6 2>/dev/null || true; } |
    while read -r _sl local_address _rest; do
      if [[ $local_address == *:* ]]; then echo $((16#${local_address##*:})); fi
    done | sort -u)
  for _ in $(seq 200); do
    port=$((20000 + RANDOM % span))
    if ! grep -qx -e "$port" -e "$((port + 1))" <<<"$taken"; then
      echo "$port"
      return
    fi
  done
  die "no free port pair found from 20000 on"
}

write_config() {
  local host port cpus memory_mb
  host=$(hostname -s)
  port=$(free_port_pair)
  cpus=$(nproc)
  memory_mb=$(awk '/^MemTotal:/ { print int($2 / 1024) }' /proc/meminfo)
  mkdir -p "$dir/state" "$dir/slurmd" "$dir/log" "$dir/run"
  cat >"$conf" <<EOF
# Written by tools/slurm-cluster.sh: a one-node test cluster, everything under $dir.
ClusterName=cuopt-test
SlurmctldHost=$host(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/slurmd
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
# A batch job is scheduled when it is submitted (the default waits up to 3 s to batch them).
SchedulerParameters=batch_sched_delay=0
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
# A finished job stays known to scontrol for an hour; a timed-out or cancelled job is killed
# ten seconds after its SIGTERM (time for its script to record the exit code on a loaded
# machine; two seconds was too short on CI's two cores); no grace beyond a time limit.
MinJobAge=3600
KillWait=10
OverTimeLimit=0
InactiveLimit=0
SlurmdTimeout=60
MessageTimeout=10
GresTypes=gpu
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$memory_mb Gres=gpu:2 State=UNKNOWN
PartitionName=debug Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
  # Two stand-in GPUs: Slurm 22.05 drops a file-less gpu gres from what slurmd reports, so
  # each gets a character device (a copy of /dev/null; a plain file where mknod is refused,
  # which slurmd logs as an error but counts). Scheduled and counted; TaskPlugin=task/none
  # binds no device, and a job sees CUDA_VISIBLE_DEVICES as it would on a GPU node.
  mkdir -p "$dir/dev"
  for i in 0 1; do
    [[ -e $dir/dev/gpu$i ]] || mknod "$dir/dev/gpu$i" c 1 3 2>/dev/null || : >"$dir/dev/gpu$i"
  done
  echo "Name=gpu File=$dir/dev/gpu[0-1]" >"$dir/gres.conf"
}

start_munge() {
  mkdir -p "$dir/munge"
  chmod 700 "$dir/munge"
  if [[ ! -s $dir/munge/munge.key ]]; then
    head -c 1024 /dev/urandom >"$dir/munge/munge.key"
    chmod 400 "$dir/munge/munge.key"
  fi
  # --force: the folder may sit under a world-writable /tmp, which munged would otherwise refuse.
  munged --force --socket="$dir/munge/munge.socket" --key-file="$dir/munge/munge.key" \
    --pid-file="$dir/run/munged.pid" --log-file="$dir/log/munged.log" \
    --seed-file="$dir/munge/munged.seed" </dev/null >>"$dir/log/munged.log" 2>&1 ||
    fail_start "munged did not start"
}

show_logs() {
  local f
  for f in "$dir"/log/*.log; do
    [[ -f $f ]] || continue
    echo "--- last lines of $f:" >&2
    tail -n 15 "$f" >&2
  done
}

fail_start() {
  echo "slurm-cluster: $*" >&2
  show_logs
  stop_cluster >/dev/null 2>&1 || true
  exit 1
}

node_state() {
  sinfo -h -N -o '%T' 2>/dev/null | head -n 1 || true
}

# The first of the cluster's daemons that wrote its pid file and is gone since, or "".
dead_daemon() {
  local name pid
  for name in munged slurmctld slurmd; do
    pid=$(cat "$dir/run/$name.pid" 2>/dev/null || true)
    if [[ -n $pid ]] && ! kill -0 "$pid" 2>/dev/null; then
      echo "$name"
      return
    fi
  done
}

start_cluster() {
  local missing=()
  for p in munged slurmctld slurmd sinfo sbatch scontrol; do
    command -v "$p" >/dev/null || missing+=("$p")
  done
  ((${#missing[@]} == 0)) ||
    die "not installed: ${missing[*]}; fix: apt-get install -y slurm-wlm munge"
  [[ $(id -u) -eq 0 ]] || die "must run as root (SlurmUser root; slurmd starts jobs as their user)"
  if [[ -f $dir/run/slurmctld.pid ]] && kill -0 "$(cat "$dir/run/slurmctld.pid")" 2>/dev/null; then
    die "a cluster already runs from $dir (slurmctld pid $(cat "$dir/run/slurmctld.pid")); stop it first"
  fi
  write_config
  start_munge
  # Their output goes to the logs: a caller reading this script's output through a pipe must
  # not wait for daemons that hold it open.
  slurmctld -c -f "$conf" </dev/null >>"$dir/log/slurmctld.log" 2>&1 ||
    fail_start "slurmctld did not start"
  slurmd -f "$conf" </dev/null >>"$dir/log/slurmd.log" 2>&1 || fail_start "slurmd did not start"
  local state="" dead deadline=$((SECONDS + wait_s))
  while ((SECONDS < deadline)); do
    sleep 0.2
    dead=$(dead_daemon)
    [[ -z $dead ]] || fail_start "$dead exited while the cluster started"
    state=$(node_state)
    [[ $state == idle ]] && break
  done
  [[ $state == idle ]] ||
    fail_start "the node is not idle after ${wait_s} s (sinfo says: ${state:-nothing})"
  echo "export SLURM_CONF=$conf"
}

# Sends SIGTERM to the daemons whose pid files are given, all at once (each takes a second or
# two to shut down), then SIGKILL to any still there after 5 s.
stop_daemons() {
  local pidfile pid pids=()
  for pidfile in "$@"; do
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [[ -n $pid ]] && kill "$pid" 2>/dev/null; then pids+=("$pid"); fi
    rm -f "$pidfile"
  done
  for _ in $(seq 50); do
    local alive=0
    for pid in "${pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    ((alive)) || return 0
    sleep 0.1
  done
  for pid in "${pids[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
}

# The pids of the processes below $1 (read from /proc: no procps in a bare container).
descendants() {
  local stat rest ppid
  for stat in /proc/[0-9]*/stat; do
    rest=$(cat "$stat" 2>/dev/null) || continue
    rest=${rest##*) }  # past "PID (COMM) ": "STATE PPID ..."
    ppid=${rest#* }
    ppid=${ppid%% *}
    if [[ $ppid == "$1" ]]; then
      stat=${stat#/proc/}
      echo "${stat%/stat}"
      descendants "${stat%/stat}"
    fi
  done
}

# A job step whose job outlived scancel (slurmctld gone first): this cluster's slurmstepd
# processes (their working folder is DIR/log) and everything they started.
kill_leftover_steps() {
  local p pid victims=()
  for p in /proc/[0-9]*; do
    [[ $(cat "$p/comm" 2>/dev/null) == slurmstepd && $(readlink "$p/cwd") == "$dir/log" ]] || continue
    pid=${p#/proc/}
    victims+=("$pid" $(descendants "$pid"))
  done
  ((${#victims[@]} == 0)) || kill -9 "${victims[@]}" 2>/dev/null || true
}

stop_cluster() {
  # The jobs first, while slurmd is there to end them (the cluster and its jobs are ours alone).
  if [[ -f $conf && -f $dir/run/slurmctld.pid ]] && kill -0 "$(cat "$dir/run/slurmctld.pid")" 2>/dev/null; then
    scancel --user="$(id -un)" >/dev/null 2>&1 || true
    for _ in $(seq 100); do
      [[ -z $(squeue -h -o %i 2>/dev/null) ]] && break
      sleep 0.1
    done
  fi
  stop_daemons "$dir/run/slurmd.pid" "$dir/run/slurmctld.pid" "$dir/run/munged.pid"
  kill_leftover_steps
  echo "slurm-cluster: stopped the cluster in $dir"
}

status_cluster() {
  local name pidfile pid
  for name in munged slurmctld slurmd; do
    pidfile=$dir/run/$name.pid
    pid=$(cat "$pidfile" 2>/dev/null || true)
    if [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null; then
      echo "$name: running (pid $pid)"
    else
      echo "$name: not running"
    fi
  done
  if [[ -f $conf ]] && [[ -z $(dead_daemon) ]] && [[ -f $dir/run/slurmctld.pid ]]; then sinfo -N; fi
}

case $action in
  start) start_cluster ;;
  stop) stop_cluster ;;
  status) status_cluster ;;
  *) usage ;;
esac
