#!/usr/bin/env bash
# One entry point for the two things a newcomer does:
#   ./build.sh test     build everything and run every test (what CI runs)
#   ./build.sh sample   run the PayCallbackApi sample (starts a local redis-server when none is reachable)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

case "${1:-}" in
  test)
    log=$(mktemp)
    started=$(date +%s)
    set +e
    # --blame keeps, per test project, the order in which its tests started (TestResults/*/Sequence_*.xml). A test
    # process that dies mid-run leaves only xUnit's bare "[FATAL ERROR] Xunit.Sdk.TestPipelineException" a minute later;
    # the sequence says which tests were running.
    dotnet test WorkQueue.sln -c Release --blame 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    set -e
    if [ "$status" -ne 0 ]; then
      find tests -path '*/TestResults/*' -name 'Sequence_*.xml' -newermt "@$started" 2>/dev/null | while read -r sequence; do
        grep -o 'Name="[^"]*"[^>]*Completed="False"' "$sequence" | sed -E 's/Name="([^"]*)".*/not completed (running when its test process ended): \1/' || true
      done
    fi
    # One plain summary line across all test assemblies.
    awk '/(Passed|Failed)! +- +Failed: / {
           gsub(",", ""); for (i = 1; i <= NF; i++) { if ($i == "Failed:") f += $(i+1); if ($i == "Passed:") p += $(i+1); if ($i == "Skipped:") s += $(i+1) }
         }
         /\[FATAL ERROR\]|Test host process crashed/ { fatal++ }
         END { printf "%d passed, %d failed, %d skipped%s\n", p, f, s, fatal ? sprintf(", %d fatal errors (a test process died: see above)", fatal) : "" }' "$log"
    rm -f "$log"
    exit "$status"
    ;;
  sample)
    if [ ! -d samples/PayCallbackApi ]; then
      echo "build.sh: the PayCallbackApi sample does not exist yet (issue: samples/PayCallbackApi)." >&2
      exit 2
    fi
    exec samples/PayCallbackApi/run.sh "${@:2}"
    ;;
  *)
    echo "usage: ./build.sh test | ./build.sh sample" >&2
    exit 2
    ;;
esac
