#!/usr/bin/env bash
# The full multi-process chaos proof of durable queues (tests/WorkQueue.DurableChaos; the CI-sized version is
# tests/WorkQueue.AspNetCore.Tests/Durable/DurableChaosTests.cs):
#   1. 100,000 jobs enqueued by 64 concurrent producers, 600/s in bursts of 1,800 every 3 s, while 4 worker processes
#      consume them; in each burst a random worker holding jobs is SIGKILLed and a replacement started, until at least 50
#      kills happened and every acknowledged job completed;
#   2. 20,000 jobs, 400/s in bursts every 3 s, with Redis itself SIGKILLed and restarted once mid-load (append-only file,
#      appendfsync always), workers still being killed in each burst.
# Each run starts its own redis-server on a free loopback port and prints chaos.key=value figures and a summary; the
# script prints both runs' figures at the end and exits non-zero if either run lost an acknowledged job (1) or fell short
# of what it was asked (2). Takes about 5 minutes.
# Usage: scripts/durable-chaos.sh   (CHAOS_JOBS, CHAOS_RATE, CHAOS_KILLS, CHAOS_RESTART_JOBS override the sizes)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

jobs=${CHAOS_JOBS:-100000}
rate=${CHAOS_RATE:-600}
kills=${CHAOS_KILLS:-50}
restart_jobs=${CHAOS_RESTART_JOBS:-20000}

command -v redis-server >/dev/null || { echo "durable-chaos.sh: needs redis-server on PATH (apt-get install -y redis-server)." >&2; exit 2; }
# shellcheck source=lib/chaos.sh
. scripts/lib/chaos.sh

set +e
run kills --jobs "$jobs" --workers 4 --producers 64 --rate "$rate" --bursts --kill-interval-ms 3000 --min-kills "$kills" --timeout-s 1800
status_kills=$?
run redis-restart --jobs "$restart_jobs" --workers 4 --producers 64 --rate 400 --bursts --kill-interval-ms 3000 --min-kills 10 --restart-redis --timeout-s 900
status_restart=$?
set -e

for name in kills redis-restart; do
  echo
  echo "== $name figures"
  grep '^chaos\.' "$logs/$name.log" || true
  tail -n 1 "$logs/$name.log"
done
rm -rf "$logs"

if [ "$status_kills" -ne 0 ] || [ "$status_restart" -ne 0 ]; then
  exit $(( status_kills > status_restart ? status_kills : status_restart ))
fi
