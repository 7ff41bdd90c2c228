#!/usr/bin/env bash
# The longer multi-process proof of durable recurring jobs (tests/WorkQueue.DurableChaos, command `recurring`; the
# CI-sized version is tests/WorkQueue.AspNetCore.Tests/Durable/RecurringChaosTests.cs): 4 worker processes register the
# same every-second recurring job on a durable queue against the run's own redis-server; every 2.5 s, just after a whole
# second, the worker running that second's occurrence is SIGKILLed mid-run (each run takes 100-300 ms) and a replacement
# started, for 5 minutes. Then every occurrence of the run is checked in Redis: completed at least once (none lost), and
# any extra run only of an occurrence a killed worker had started (at-least-once after a crash, counted and explained).
# Prints chaos.key=value figures; exits 1 if an occurrence was lost or ran twice with no kill to explain it, 2 if the run
# fell short. Takes about RECURRING_CHAOS_SECONDS + 30 s.
# Usage: scripts/recurring-chaos.sh   (RECURRING_CHAOS_SECONDS, RECURRING_CHAOS_WORKERS, RECURRING_CHAOS_KILL_MS override)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=${RECURRING_CHAOS_SECONDS:-300}
workers=${RECURRING_CHAOS_WORKERS:-4}
kill_ms=${RECURRING_CHAOS_KILL_MS:-2500}

command -v redis-server >/dev/null || { echo "recurring-chaos.sh: needs redis-server on PATH (apt-get install -y redis-server)." >&2; exit 2; }
dotnet build tests/WorkQueue.DurableChaos/WorkQueue.DurableChaos.csproj -c Release -nologo -v quiet
dll=tests/WorkQueue.DurableChaos/bin/Release/net10.0/WorkQueue.DurableChaos.dll

echo "== dotnet $dll recurring --seconds $seconds --workers $workers --kill-interval-ms $kill_ms"
exec dotnet "$dll" recurring --seconds "$seconds" --workers "$workers" --kill-interval-ms "$kill_ms" --timeout-s $(( seconds + 300 ))
