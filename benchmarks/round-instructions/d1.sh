#!/usr/bin/env bash
# Redis's instructions and commands per job of the D1 workload (DurableThroughputBenchmarks.WorkQueue_Durable: 4
# producers x 64 awaited enqueues, 8 workers, prefetch 256, a trivial job), counted by callgrind, so repeatable whatever
# else the machine runs (unlike time), for whole builds: enqueues, fetches and acknowledgements through each build's
# real store, not a harness's copy of one argument layout (run.sh). For each build given (a folder holding its
# WorkQueue.AspNetCore.dll and WorkQueue.Core.dll, any commit since fee1c93) and each records setting (yes: the default
# job records; no: FinishedJobRetention 0), driver/ is compiled against that build, a redis-server is started under
# `valgrind --tool=callgrind` (AOF on, appendfsync everysec, as D1), and the driver runs 1,000 warm-up jobs, zeroes the
# counters (callgrind_control -z, CONFIG RESETSTAT), runs JOBS jobs until all are acknowledged, and dumps; then stays
# idle as long again and dumps that apart. Heartbeats are put off past the run (a heartbeat claims every held entry
# again: under callgrind the run takes minutes, so they would add Redis work that depends on the machine's load).
# Printed per job: Redis instructions (the jobs' window minus the idle window, serverCron left out of both: its memory
# statistics cost with the wall time, which callgrind stretches), commands (INFO commandstats, those run
# inside scripts included; the driver's own XINFO GROUPS polls and CONFIG RESETSTAT left out) and script calls, then
# each command per job for every build side by side. The callgrind outputs stay in OUT (default: a new temp folder):
# `callgrind_annotate --inclusive=yes OUT/<label>-<records>.jobs` shows where the instructions go (Lua's own functions
# have no symbols in Debian's redis-server: the VM shows as addresses under lua_pcall; commands by name, e.g. hsetCommand).
# Usage: benchmarks/round-instructions/d1.sh [-n JOBS] [-o OUT] [-r yes|no] label=bin-folder [label=bin-folder ...]
#   e.g. benchmarks/round-instructions/d1.sh before=/work/tmp/bench-before/src/WorkQueue.AspNetCore/bin/Release/net10.0 \
#          after=src/WorkQueue.AspNetCore/bin/Release/net10.0
# (JOBS defaults to 20,000; -r runs one records setting, both by default.) Needs valgrind, redis-server, redis-cli,
# python3 and the .NET SDK. About 3-6 minutes per build and setting at 20,000 jobs on a busy 2-core machine.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
jobs=20000
out=""
settings="yes no"
while getopts "n:o:r:" opt; do
  case $opt in
    n) jobs=$OPTARG ;;
    o) out=$OPTARG ;;
    r) settings=$OPTARG ;;
    *) echo "usage: $0 [-n JOBS] [-o OUT] [-r yes|no] label=folder [label=folder ...]" >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: $0 [-n JOBS] [-o OUT] [-r yes|no] label=folder [label=folder ...]" >&2; exit 2; }
out=${out:-$(mktemp -d)}
mkdir -p "$out"
labels=()
for pair in "$@"; do
  label=${pair%%=*}
  bin=$(cd "${pair#*=}" && pwd)
  labels+=("$label")
  rm -rf "$out/driver-$label"
  cp -r "$here/driver" "$out/driver-$label"
  rm -rf "$out/driver-$label/bin" "$out/driver-$label/obj"
  dotnet build "$out/driver-$label" -c Release -p:WorkQueueBin="$bin" -o "$out/run-$label" >"$out/build-$label.log" 2>&1 \
    || { echo "driver build against $bin failed: $out/build-$label.log" >&2; exit 1; }
  for records in $settings; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    data="$out/redis-$label-$records"
    rm -rf "$data"; mkdir -p "$data"
    valgrind --tool=callgrind --callgrind-out-file="$out/cg-$label-$records.%p" \
      redis-server --port "$port" --bind 127.0.0.1 --save '' --dir "$data" --appendonly yes --appendfsync everysec \
      >"$out/valgrind-$label-$records.log" 2>&1 &
    server=$!
    for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.3; done
    drove=0
    dotnet "$out/run-$label/RoundDriver.dll" "$port" "$jobs" "$records" "$server" >"$out/drive-$label-$records.txt" || drove=$?
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    for _ in $(seq 1 120); do kill -0 "$server" 2>/dev/null || break; sleep 0.5; done
    kill "$server" 2>/dev/null || true
    wait "$server" || true
    [ "$drove" = 0 ] || { echo "the driver failed ($label, records=$records): $out/drive-$label-$records.txt" >&2; exit 1; }
    # Dumps: .1 after the jobs, .2 after the idle window (the last, at exit, is the rest: start, warm-up, stop).
    mv "$out/cg-$label-$records.$server.1" "$out/$label-$records.jobs"
    mv "$out/cg-$label-$records.$server.2" "$out/$label-$records.idle"
  done
done
python3 - "$out" "$jobs" "$settings" "${labels[@]}" <<'PY'
import sys
out, jobs, settings, labels = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4:]
import subprocess
def instructions(path):
    # Less serverCron's (its memory statistics cost with the wall time, which callgrind stretches, not with the jobs).
    total = next(int(l.split()[1]) for l in open(path) if l.startswith('totals:'))
    out = subprocess.run(['callgrind_annotate', '--inclusive=yes', path], capture_output=True, text=True).stdout
    cron = next((int(l.split()[0].replace(',', '')) for l in out.split('\n') if ':serverCron ' in l), 0)
    return total - cron
def commands(path):
    phases, phase = {}, None
    for line in open(path):
        w = line.split()
        if w[0] == 'phase': phase = phases.setdefault(w[1], {})
        elif w[0] == 'commands' and w[1] not in ('xinfo|groups', 'config|resetstat'): phase[w[1]] = int(w[2])
    return phases['jobs']
rows = {}
for label in labels:
    for records in settings:
        base = f'{out}/{label}-{records}'
        ins = instructions(base + '.jobs') - instructions(base + '.idle')
        cmds = commands(f'{out}/drive-{label}-{records}.txt')
        rows[label, records] = cmds
        print(f'{label:>10} records={records:3}  instructions/job {ins / jobs:9,.0f}  (less an idle window of {instructions(base + ".idle") / jobs:,.0f})'
              f'  commands/job {sum(cmds.values()) / jobs:6.3f}  script calls/job {(cmds.get("evalsha", 0) + cmds.get("eval", 0)) / jobs:.4f}')
for records in settings:
    names = sorted(set().union(*(rows[l, records] for l in labels)))
    print(f'\ncommands per job, records={records}: ' + '  '.join(f'{l:>10}' for l in labels))
    for n in names:
        v = [rows[l, records].get(n, 0) / jobs for l in labels]
        print(f'  {n:24}' + '  '.join(f'{x:10.4f}' for x in v))
print(f'\ncallgrind outputs: {out}/<label>-<records>.jobs (callgrind_annotate --inclusive=yes FILE | head -60)')
PY
