#!/usr/bin/env bash
# The longer Redis Cluster proof of durable queues (tests/WorkQueue.DurableChaos --cluster; the CI-sized version is
# tests/WorkQueue.AspNetCore.Tests/Durable/DurableChaosTests.cs, ClusterSlotMovedMidLoad_NothingAcknowledgedIsLost).
# Each run starts a cluster of three masters and three replicas (redis-server --cluster-enabled yes, append-only file,
# appendfsync everysec; joined by redis-cli --cluster create --cluster-replicas 1) on free loopback ports, 4 worker
# processes and 64 producers connecting with the masters' endpoints; a busy worker is SIGKILLed every 3 s, and once half
# the jobs are acknowledged the queue's slot (its keys share the hash tag {chaos}) moves to another master (SETSLOT
# IMPORTING/MIGRATING, MIGRATE CLUSTER_BATCH keys at a time, SETSLOT NODE). Then it counts in Redis how many times each
# job completed. Any acknowledged job lost fails the script. Prints each run's figures (slot_move_ms: the migration;
# enqueue_pause_ms: the longest gap between acknowledged enqueues from the move's start) and the totals; exits 1 if a
# run lost an acknowledged job, 2 if a run fell short of what it was asked. Takes about CLUSTER_RUNS x 1 minute.
# Usage: scripts/cluster-chaos.sh   (CLUSTER_RUNS, CLUSTER_JOBS, CLUSTER_RATE, CLUSTER_BATCH override the sizes)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

runs=${CLUSTER_RUNS:-5}
jobs=${CLUSTER_JOBS:-20000}
rate=${CLUSTER_RATE:-1000}
batch=${CLUSTER_BATCH:-10}

command -v redis-server >/dev/null || { echo "cluster-chaos.sh: needs redis-server on PATH (apt-get install -y redis-server)." >&2; exit 2; }
command -v redis-cli >/dev/null || { echo "cluster-chaos.sh: needs redis-cli on PATH (Debian's redis-tools, which redis-server depends on)." >&2; exit 2; }
# shellcheck source=lib/chaos.sh
. scripts/lib/chaos.sh

common=(--jobs "$jobs" --workers 4 --producers 64 --rate "$rate" --kill-interval-ms 3000 --min-kills 2 --cluster --migrate-batch "$batch" --claim-timeout-ms 4000 --timeout-s 900)
for i in $(seq 1 "$runs"); do
  name="cluster-$i"
  # `|| status=$?`: run re-enables errexit, so a run that lost jobs must not end the script here.
  status=0
  run "$name" "${common[@]}" || status=$?
  keep_worst "$status"
done

echo
lost=0; acked=0; dup=0; keys=""; moved=""; paused=""
for i in $(seq 1 "$runs"); do
  name="cluster-$i"
  lost=$(( lost + $(figure "$name" lost) ))
  acked=$(( acked + $(figure "$name" acknowledged) ))
  dup=$(( dup + $(figure "$name" duplicates) ))
  keys="$keys $(figure "$name" slot_keys)"
  moved="$moved $(figure "$name" slot_move_ms)"
  paused="$paused $(figure "$name" enqueue_pause_ms)"
  tail -n 1 "$logs/$name.log"
done
echo "== cluster: $runs slot moves, $acked jobs acknowledged, $lost lost, $dup duplicates; keys moved:$keys; migration (ms):$moved; producers held up (ms):$paused"
rm -rf "$logs"
exit "$worst"
