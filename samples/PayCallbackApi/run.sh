#!/usr/bin/env bash
# Runs the PayCallbackApi sample on http://127.0.0.1:5080 (override with URLS=...). Extra arguments go to the app.
# If nothing answers PING at ConnectionStrings__Redis (default 127.0.0.1:6379), it starts a throwaway local
# redis-server there (installing it with apt-get when it is missing and we are root) and stops it on exit.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

redis=${ConnectionStrings__Redis:-127.0.0.1:6379}
endpoint=${redis%%,*}
host=${endpoint%:*}
port=${endpoint##*:}

ping_redis() {
  (exec 3<>"/dev/tcp/$host/$port" && printf 'PING\r\n' >&3 && IFS= read -r -t 2 reply <&3 && [[ $reply == +PONG* ]]) 2>/dev/null
}

if ! ping_redis; then
  if ! command -v redis-server >/dev/null 2>&1; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      echo "run.sh: installing redis-server" >&2
      DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq redis-server >/dev/null
    else
      echo "run.sh: no Redis answers at $host:$port and redis-server is not installed (Debian/Ubuntu: sudo apt-get install redis-server)." >&2
      exit 2
    fi
  fi
  if [ "$host" != 127.0.0.1 ] && [ "$host" != localhost ]; then
    echo "run.sh: no Redis answers at $host:$port; start it, or unset ConnectionStrings__Redis to use a local one." >&2
    exit 2
  fi
  echo "run.sh: starting a local redis-server on 127.0.0.1:$port (stopped when the app exits)" >&2
  redis-server --port "$port" --bind 127.0.0.1 --save "" --appendonly no >/dev/null &
  redis_pid=$!
  trap 'kill "$redis_pid" 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do ping_redis && break; sleep 0.1; done
  ping_redis || { echo "run.sh: redis-server did not start" >&2; exit 2; }
fi

if [ -z "${PayCallback__SigningKey:-}" ]; then
  export PayCallback__SigningKey=dev-signing-key-change-me
  echo "run.sh: PayCallback__SigningKey not set; using the development key '$PayCallback__SigningKey'" >&2
fi

dotnet run -c Release --project "$here" -- --urls "${URLS:-http://127.0.0.1:5080}" "$@"
