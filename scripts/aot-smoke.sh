#!/usr/bin/env bash
# The native AOT proof (issue 31): publishes tests/WorkQueue.AotSmoke with PublishAot (trim and AOT warnings are errors)
# and runs the native binary against a fresh redis-server: in-memory jobs, a recurring job, configuration binding, the
# admin endpoints and a durable queue with source-generated JSON. It exits 0 only if every job ran. This is
# tests/WorkQueue.Packaging.Tests/AotSmokeTests, an explicit test: CI builds the smoke app (so the trim and AOT analyzers
# check WorkQueue and the app on every run) but does not publish it, which takes several minutes on two cores.
# Needs clang and zlib1g-dev (apt-get install -y clang zlib1g-dev; .ci/run installs them) and redis-server.
# Usage: scripts/aot-smoke.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

for tool in clang redis-server; do
  command -v "$tool" >/dev/null || { echo "aot-smoke.sh: needs $tool on PATH (apt-get install -y clang zlib1g-dev redis-server)." >&2; exit 2; }
done
dpkg -s zlib1g-dev >/dev/null 2>&1 || { echo "aot-smoke.sh: needs zlib1g-dev (apt-get install -y zlib1g-dev)." >&2; exit 2; }

project=tests/WorkQueue.Packaging.Tests/WorkQueue.Packaging.Tests.csproj
dotnet build "$project" -c Release -nologo -v quiet
started=$(date +%s)
tests/WorkQueue.Packaging.Tests/bin/Release/net10.0/WorkQueue.Packaging.Tests -class WorkQueue.Packaging.Tests.AotSmokeTests -explicit only
echo "aot-smoke.sh: published and ran the native smoke app in $(( $(date +%s) - started )) s"
