#!/usr/bin/env bash
# Redis's CPU per durable job through the real store (not a benchmark): starts a redis-server (AOF, appendfsync
# everysec) on a free loopback port, runs scripts/round-cpu (8 workers, 4 producers) for N jobs with and without
# ended-job records, and prints INFO cpu and INFO commandstats per job. Usage: scripts/round-cpu.sh [jobs] [out dir]
# (NOBUILD=1 runs a build already in out dir, e.g. one of an older commit). jobs 0: commands an idle instance sends in 30 s.
set -euo pipefail
jobs=${1:-100000}
out=${2:-/tmp/round-cpu-bin}
here=$(cd "$(dirname "$0")" && pwd)
[ "${NOBUILD:-0}" = 1 ] || dotnet build "$here/round-cpu/RoundCpu.csproj" -c Release -o "$out" -v q -nologo >/dev/null
for records in 1 0; do
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  dir=$(mktemp -d)
  redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --appendonly yes --appendfsync everysec --save '' --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log"
  sleep 0.5
  dotnet "$out/RoundCpu.dll" "127.0.0.1:$port" "$jobs" "$records" || true
  kill "$(cat "$dir/redis.pid")"; sleep 0.3; rm -rf "$dir"
done
