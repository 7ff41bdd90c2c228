#!/usr/bin/env bash
# One entry point for the two things a newcomer does:
#   ./build.sh test     build everything and run every test (what CI runs)
#   ./build.sh sample   run the PayCallbackApi sample (starts a local redis-server when none is reachable)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

case "${1:-}" in
  test)
    log=$(mktemp)
    set +e
    # --blame-crash: if a test process dies, VSTest names the tests it was running and keeps a mini dump under the
    # test project's TestResults (xUnit alone reports a bare TestPipelineException a minute later).
    dotnet test WorkQueue.sln -c Release --blame-crash --blame-crash-dump-type mini 2>&1 | tee "$log"
    status=${PIPESTATUS[0]}
    set -e
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
