#!/usr/bin/env bash
# Profiles the app under compare.sh's load: runs compare.sh for one mode and, from 15 s into the measured load (after
# the warm-up with --warmup S), records the app's CPU with perf (cpu-clock, 499 Hz, call stacks) for 30 s, then prints
# where it went (breakdown.py): by thread (what it does) and by kind of code, in microseconds per accepted callback from
# the same run's CPU figures.
#
#   samples/PayCallbackApi/loadtest/profile.sh [Queue|Durable|Bare] [compare.sh options...]
#   samples/PayCallbackApi/loadtest/profile.sh Queue --warmup 30    # the steady state, past the JIT's warm-up
#
# Needs perf (Debian: apt-get install linux-perf) and root or kernel.perf_event_paranoid <= 1. The app runs with
# DOTNET_PerfMapEnabled=1 (perf reads the JIT's symbols from /tmp/perf-<pid>.map) and DOTNET_EnableWriteXorExecute=0
# (with W^X on, jitted code runs from a double mapping perf cannot name). Both change the app a little: a profiled
# run's own figures are not the comparison's (and with them the app has not stopped on SIGINT: compare.sh kills it after
# 20 s, so that run's 'app stopped' says 20 s). Writes results/profile-<mode>-<timestamp>/ (git-ignored).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mode=${1:-Queue}; shift || true
command -v perf >/dev/null || { echo "profile.sh: needs perf (apt-get install -y linux-perf)" >&2; exit 2; }
out=$here/results/profile-$mode-$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
export DOTNET_PerfMapEnabled=1 DOTNET_EnableWriteXorExecute=0
"$here/compare.sh" --modes "$mode" --results-dir "$out" "$@" > "$out/compare.log" 2>&1 &
compare=$!
# compare.sh writes <run>/<mode>/measured-load.start as the measured load starts (after any warm-up), then starts the
# load tool. The wait covers the build, the app's start-up and the warm-up with its drain (up to --drain-cap).
load=""
for _ in $(seq 1 2400); do
  if compgen -G "$out/*/$mode/measured-load.start" >/dev/null; then
    load=$(pgrep -f 'ApacheJMeter|wrk ' | head -n 1 || true)
    [ -n "$load" ] && break
  fi
  kill -0 "$compare" 2>/dev/null || { echo "profile.sh: compare.sh ended before the load started (see $out/compare.log)" >&2; exit 1; }
  sleep 0.5
done
[ -n "$load" ] || { echo "profile.sh: the load never started (see $out/compare.log)" >&2; exit 1; }
sleep 15
app=$(pgrep -f 'PayCallbackApi.dll' | head -n 1)
echo "profile.sh: recording the app (pid $app) for 30 s" >&2
perf record -e cpu-clock -F 499 -g -p "$app" -o "$out/perf.data" -- sleep 30 > "$out/perf.log" 2>&1
cp "/tmp/perf-$app.map" "$out/" 2>/dev/null || true
wait "$compare" || echo "profile.sh: compare.sh exited with $? (see $out/compare.log)" >&2
perf script -i "$out/perf.data" > "$out/perf.script" 2>/dev/null
report=$(ls "$out"/*.md | head -n 1)
per_callback=$(grep -oE '[0-9]+ us \|?$' "$report" | head -n 1 | grep -oE '^[0-9]+' || true)
cat "$report"
python3 "$here/breakdown.py" "$out/perf.script" ${per_callback:+--per-callback-us "$per_callback"} | tee "$out/breakdown.md"
