#!/usr/bin/env bash
# The long run of the durable model test (tests/WorkQueue.AspNetCore.Tests/Durable/Model, issue 28): many random seeds,
# many steps each, through the same test the CI runs with a few seeds (it starts and stops its own redis-server, the
# test fixture's). A failure prints its seed, step, the last 30 steps and what disagreed; replay it with
#   WORKQUEUE_MODEL_SEED=<seed> WORKQUEUE_MODEL_STEPS=<step> scripts/durable-model.sh
# Environment: WORKQUEUE_MODEL_SEEDS (random seeds, default 100), WORKQUEUE_MODEL_STEPS (steps per seed, default 3000),
# WORKQUEUE_MODEL_SEED (replay these seeds, comma-separated, instead of random ones), WORKQUEUE_MODEL_OPS (operations taken
# out of the mix, comma-separated: no-cancel-stream-id, no-data-loss).
# Usage: scripts/durable-model.sh
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

command -v redis-server >/dev/null || { echo "durable-model.sh: needs redis-server on PATH (apt-get install -y redis-server)." >&2; exit 2; }
export WORKQUEUE_MODEL_STEPS=${WORKQUEUE_MODEL_STEPS:-3000}
if [[ -z "${WORKQUEUE_MODEL_SEED:-}" ]]; then
  export WORKQUEUE_MODEL_SEEDS=${WORKQUEUE_MODEL_SEEDS:-100}
fi

project=tests/WorkQueue.AspNetCore.Tests/WorkQueue.AspNetCore.Tests.csproj
dotnet build "$project" -c Release -nologo -v quiet
echo "== durable model: seeds ${WORKQUEUE_MODEL_SEED:-${WORKQUEUE_MODEL_SEEDS} random}, ${WORKQUEUE_MODEL_STEPS} steps each, extra operations [${WORKQUEUE_MODEL_OPS:-}]"
exec dotnet test "$project" -c Release --no-build --filter "FullyQualifiedName~Durable.Model.DurableModelTests" --logger "console;verbosity=detailed"
