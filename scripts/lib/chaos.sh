# Shared by scripts/durable-chaos.sh, failover-chaos.sh and cluster-chaos.sh (sourced from the repository root, after
# `set -euo pipefail`): builds the chaos program and gives each script
#   run NAME ARGS...      runs `controller ARGS...`, its output teed to $logs/NAME.log; returns its exit code
#   figure NAME KEY       the last chaos.KEY=value the run NAME printed
#   keep_worst STATUS     keeps in $worst the worst exit code so far: 1 (an acknowledged job lost) over 2 (a run fell short)
# and $dll, $logs (a temporary folder the script removes) and $worst (0).
dotnet build tests/WorkQueue.DurableChaos/WorkQueue.DurableChaos.csproj -c Release -nologo -v quiet
dll=tests/WorkQueue.DurableChaos/bin/Release/net10.0/WorkQueue.DurableChaos.dll
logs=$(mktemp -d)
worst=0

run() {
  local name=$1; shift
  echo "== $name: dotnet $dll controller $*"
  set +e
  dotnet "$dll" controller "$@" | tee "$logs/$name.log"
  local status=${PIPESTATUS[0]}
  set -e
  echo "== $name: exit code $status"
  return "$status"
}

figure() { grep "^chaos\.$2=" "$logs/$1.log" | tail -n 1 | cut -d= -f2; }

keep_worst() {
  if [ "$1" -eq 1 ] || { [ "$1" -eq 2 ] && [ "$worst" -eq 0 ]; }; then worst=$1; fi
}
