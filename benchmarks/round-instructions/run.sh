#!/usr/bin/env bash
# Redis instructions of the round script's acknowledgements, counted by callgrind (repeatable whatever else the machine
# runs, unlike time): redis-server under valgrind, driven by drive.py with 40 rounds of 256 entries added, read and
# acknowledged as plain acknowledgements by round.lua, once per built WorkQueue.AspNetCore.dll given, each with no
# ended-job records (0) and with them (600000 ms). The total includes redis-server's start and the XADD/XREADGROUP of
# the driver, the same for every dll: compare totals, divide the difference by 10,240 acknowledgements.
# Usage: benchmarks/round-instructions/run.sh path/to/WorkQueue.AspNetCore.dll [more dlls...]
# Needs valgrind, redis-server, python3 and the .NET SDK (dotnet fsi reads the expanded script from the dll).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
out=$(mktemp -d)
for dll in "$@"; do
  dotnet fsi "$here/dump.fsx" "$dll" "$out/round.lua"
  for finished in 0 600000; do
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
    server=$!
    for _ in $(seq 1 100); do redis-cli -p "$port" ping >/dev/null 2>&1 && break; sleep 0.3; done
    python3 "$here/drive.py" "$port" "$out/round.lua" 40 256 "$finished" >/dev/null
    redis-cli -p "$port" shutdown nosave >/dev/null 2>&1 || true
    for _ in $(seq 1 120); do kill -0 "$server" 2>/dev/null || break; sleep 0.5; done
    kill "$server" 2>/dev/null || true
    wait "$server" || true
    echo "$dll finished=$finished instructions=$(awk '/^totals:/ {print $2}' "$out/cg.out")"
  done
done
rm -rf "$out"
