#!/usr/bin/env bash
# Redis's CPU per durable job through the real store (not a benchmark): starts a redis-server (AOF, appendfsync
# everysec) on a free loopback port, runs scripts/round-cpu (8 workers, 4 producers) for N jobs with and without
# ended-job records, and prints INFO cpu and INFO commandstats per job. Usage: scripts/round-cpu.sh [jobs] [out dir]
# (NOBUILD=1 runs a build already in out dir, e.g. one of an older commit). jobs 0: commands an idle instance sends in
# 30 s. jobs "direct": the round script alone, called directly, in the full and the plain argument layouts (an older
# build's script only reads the full one).
set -euo pipefail
jobs=${1:-100000}
out=${2:-/tmp/round-cpu-bin}
here=$(cd "$(dirname "$0")" && pwd)
[ "${NOBUILD:-0}" = 1 ] || dotnet build "$here/round-cpu/RoundCpu.csproj" -c Release -o "$out" -v q -nologo >/dev/null
run() {
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  dir=$(mktemp -d)
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes --appendfsync everysec --save '' --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
  sleep 0.5
  dotnet "$out/RoundCpu.dll" "127.0.0.1:$port" "$@" || true
  kill "$(cat "$dir/redis.pid")"; sleep 0.3; rm -rf "$dir"
}
if [ "$jobs" = direct ]; then
  run direct full
  run direct plain
  exit 0
fi
for records in 1 0; do
  run "$jobs" "$records"
done
