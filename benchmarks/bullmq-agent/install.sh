#!/usr/bin/env bash
# Installs the BullMQ agent's packages (package-lock.json, exactly) into node_modules/ next to this script, when they
# are missing or were installed from another lock file. WorkQueue.Benchmarks (Support/BullMqProcess.cs) runs it before
# it starts the agent; run it by hand to install ahead of a benchmark run.
#
# `npm ci --ignore-scripts`: no package's install script runs. The only one (msgpackr-extract's) checks for or builds
# an optional native msgpack decoder; the prebuilt one comes as an optional dependency for this platform, and msgpackr
# falls back to JavaScript without it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

for tool in node npm; do
  if ! command -v "$tool" > /dev/null; then
    echo "bullmq-agent: '$tool' is not on PATH: the BullMQ rows need Node.js 20 or later and npm." >&2
    exit 2
  fi
done

major="$(node -p 'process.versions.node.split(".")[0]')"
if (( major < 20 )); then
  echo "bullmq-agent: Node.js $(node --version) is too old: the BullMQ rows need Node.js 20 or later." >&2
  exit 2
fi

# The lock file's hash, recorded after a successful install: a changed lock file installs again.
stamp=node_modules/.workqueue-lock-sha256
wanted="$(sha256sum package-lock.json | cut -d' ' -f1)"

# One install at a time (two benchmark runs started together).
exec 9> .install.lock
flock 9
if [[ -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
  exit 0
fi

echo "bullmq-agent: installing its packages (npm ci)..." >&2
npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >&2
echo "$wanted" > "$stamp"
