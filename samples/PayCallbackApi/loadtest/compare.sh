#!/usr/bin/env bash
# Drives the same signed-callback load at PayCallbackApi in each processing mode (Naive = the incident, Queue = the
# fix) and prints one Markdown table: mode, requests, TPS, mean/p50/p99 latency, errors, the longest stall, the peak
# CLR thread-pool thread count, and how long after the load every accepted callback's effects were done.
#
#   samples/PayCallbackApi/loadtest/compare.sh                       # JMeter, 200 threads, 60 s, Naive then Queue
#   samples/PayCallbackApi/loadtest/compare.sh --tool wrk -c 20 -d 10 # a quick run with wrk + sign.lua
#
# Options (each also settable through the environment variable in brackets):
#   --tool jmeter|wrk     load generator [TOOL, default jmeter]
#   -c, --threads N       concurrent clients: JMeter threads / wrk connections [THREADS, default 200]
#   -d, --duration S      seconds of load per mode [DURATION, default 60]
#   --latency MS          PayCallback:ProviderLatencyMs, the legacy SMS/delivery block [PROVIDER_LATENCY_MS, default 20]
#   --modes "A B"         modes, in order [MODES, default "Naive Queue"]
#   --dup-percent N       share of duplicate callbacks [DUP_PERCENT, default 10]
#   --drain-cap S         give up waiting for the effects after S seconds [DRAIN_CAP, default 300]
#   --stuck-after S       ... or once nothing has moved for S seconds with the app idle (no client connection, no
#                         pending thread-pool work): effects that failed in Naive mode are never retried, so they
#                         would never complete [STUCK_AFTER, default 60; 0 = wait for the cap]
#   --results-dir DIR     where <timestamp>.md and <timestamp>/ go [RESULTS_DIR, default loadtest/results]
#   --no-build            use the existing Release build [NO_BUILD=1]
#   JMETER=path           the jmeter launcher (default: <repo>/../shared/tools/jmeter, else jmeter on PATH)
#   SIGNING_KEY=...       the HMAC key given to both the app and the load tool (default: a fixed test key)
#
# For each mode: a fresh redis-server on a free loopback port, the app (Release build, built once up front) on another
# free loopback port with PayCallback__DiagnosticsIntervalMs=1000 and its log in a file, a wait until /health/live
# answers, then the load at once: no warm-up request, so Naive mode's first callbacks meet its cold Redis connection
# (Queue mode warms Redis before it listens, as designed). After the load: poll Redis every 0.5 s until
# pay:stats:completed == pay:stats:accepted, then stop the app (SIGINT, SIGKILL after 20 s) and Redis.
# Everything listens on 127.0.0.1 only; every wait is bounded; an EXIT/INT/TERM trap stops whatever is still running.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
project=$(cd "$here/.." && pwd)
repo=$(cd "$project/../.." && pwd)
command_line="$(printf '%q ' "$0" "$@")"
command_line=${command_line% }

TOOL=${TOOL:-jmeter}
THREADS=${THREADS:-200}
DURATION=${DURATION:-60}
PROVIDER_LATENCY_MS=${PROVIDER_LATENCY_MS:-20}
MODES=${MODES:-"Naive Queue"}
DUP_PERCENT=${DUP_PERCENT:-10}
DRAIN_CAP=${DRAIN_CAP:-300}
STUCK_AFTER=${STUCK_AFTER:-60}
RESULTS_DIR=${RESULTS_DIR:-$here/results}
NO_BUILD=${NO_BUILD:-0}
SIGNING_KEY=${SIGNING_KEY:-loadtest-signing-key-0123456789}
RAMPUP=1
CONNECT_TIMEOUT_MS=5000
RESPONSE_TIMEOUT_MS=30000

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
die() { echo "compare.sh: $*" >&2; exit 2; }

while [ $# -gt 0 ]; do
  case $1 in
    --tool) TOOL=${2:?}; shift 2 ;;
    -c|--threads) THREADS=${2:?}; shift 2 ;;
    -d|--duration) DURATION=${2:?}; shift 2 ;;
    --latency) PROVIDER_LATENCY_MS=${2:?}; shift 2 ;;
    --modes) MODES=${2:?}; shift 2 ;;
    --dup-percent) DUP_PERCENT=${2:?}; shift 2 ;;
    --drain-cap) DRAIN_CAP=${2:?}; shift 2 ;;
    --stuck-after) STUCK_AFTER=${2:?}; shift 2 ;;
    --results-dir) RESULTS_DIR=${2:?}; shift 2 ;;
    --no-build) NO_BUILD=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

case $TOOL in jmeter|wrk) ;; *) die "--tool must be jmeter or wrk" ;; esac
for n in THREADS DURATION PROVIDER_LATENCY_MS DUP_PERCENT DRAIN_CAP STUCK_AFTER; do
  [[ ${!n} =~ ^[0-9]+$ ]] || die "$n must be a non-negative integer (got '${!n}')"
done
[ "$THREADS" -ge 1 ] && [ "$DURATION" -ge 2 ] || die "need at least 1 thread and 2 seconds"
for m in $MODES; do case $m in Naive|Queue) ;; *) die "unknown mode '$m' (Naive or Queue)" ;; esac; done

# ---------------------------------------------------------------------------------------------------------------------
# Prerequisites: redis-server/redis-cli, curl, python3, and the load tool (installed with apt-get when root).

apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "compare.sh: installing $*" >&2
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get update -qq \
      && DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq "$@" >/dev/null
  else
    die "missing $* (Debian/Ubuntu: sudo apt-get install -y $*)"
  fi
}

command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1 || apt_install redis-server
command -v curl >/dev/null 2>&1 || apt_install curl
command -v python3 >/dev/null 2>&1 || die "python3 is required"
command -v dotnet >/dev/null 2>&1 || die "dotnet is required"
if [ "$TOOL" = wrk ]; then
  command -v wrk >/dev/null 2>&1 || apt_install wrk
else
  JMETER=${JMETER:-}
  if [ -z "$JMETER" ]; then
    if [ -x "$repo/../shared/tools/jmeter" ]; then JMETER=$repo/../shared/tools/jmeter
    elif command -v jmeter >/dev/null 2>&1; then JMETER=$(command -v jmeter)
    else die "no JMeter: set JMETER=/path/to/jmeter (5.6+), or use --tool wrk"; fi
  fi
  command -v java >/dev/null 2>&1 || apt_install default-jre-headless
fi

# ---------------------------------------------------------------------------------------------------------------------
# Cleanup: everything this script starts is tracked here and stopped on exit, however the script ends.

app_pid="" redis_pid="" load_pid=""

stop_app() {  # [grace seconds, default 20]
  local grace=${1:-20}
  [ -n "$app_pid" ] || return 0
  if kill -0 "$app_pid" 2>/dev/null; then
    kill -INT "$app_pid" 2>/dev/null || true
    for _ in $(seq 1 $((grace * 2))); do kill -0 "$app_pid" 2>/dev/null || break; sleep 0.5; done
    if kill -0 "$app_pid" 2>/dev/null; then
      echo "compare.sh: app did not stop within $grace s of SIGINT; killing it" >&2
      kill -KILL "$app_pid" 2>/dev/null || true
    fi
  fi
  wait "$app_pid" 2>/dev/null || true
  app_pid=""
}

stop_redis() {
  [ -n "$redis_pid" ] || return 0
  if kill -0 "$redis_pid" 2>/dev/null; then
    kill -TERM "$redis_pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$redis_pid" 2>/dev/null || break; sleep 0.25; done
    kill -KILL "$redis_pid" 2>/dev/null || true
  fi
  wait "$redis_pid" 2>/dev/null || true
  redis_pid=""
}

stop_load() {
  [ -n "$load_pid" ] || return 0
  # load_pid is `timeout`, which passes the signal on to JMeter or wrk.
  kill -TERM "$load_pid" 2>/dev/null || true
  for _ in $(seq 1 20); do kill -0 "$load_pid" 2>/dev/null || break; sleep 0.5; done
  kill -KILL "$load_pid" 2>/dev/null || true
  wait "$load_pid" 2>/dev/null || true
  load_pid=""
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_load
  stop_app 5
  stop_redis
  exit "$rc"
}
trap cleanup EXIT
trap 'echo "compare.sh: interrupted; cleaning up" >&2; exit 130' INT
trap 'echo "compare.sh: terminated; cleaning up" >&2; exit 143' TERM

# ---------------------------------------------------------------------------------------------------------------------

now_ms() { date +%s%3N; }
seconds_since() { python3 -c "import sys; print(f'{(int(sys.argv[2]) - int(sys.argv[1])) / 1000:.1f}')" "$1" "$(now_ms)"; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
rcli() { timeout 5 redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
# True while the app holds a client connection (a request in flight, or a keep-alive connection not yet closed).
if command -v ss >/dev/null 2>&1; then
  server_busy() { [ -n "$(ss -Htn state established state close-wait state syn-recv "( sport = :$app_port )" 2>/dev/null | head -n 1)" ]; }
else
  echo "compare.sh: 'ss' (iproute2) not found: cannot see requests still in flight after the load" >&2
  server_busy() { return 1; }
fi
counter() { local v; v=$(rcli --raw GET "$1" 2>/dev/null) || v=""; echo "${v:-0}"; }

# Build once, up front (warnings are errors in this repo, so a broken tree fails here rather than mid-run).
dll=$project/bin/Release/net10.0/PayCallbackApi.dll
if [ "$NO_BUILD" != 1 ]; then
  echo "compare.sh: building PayCallbackApi (Release)" >&2
  timeout 900 dotnet build "$project/PayCallbackApi.csproj" -c Release -nologo -v quiet >/dev/null \
    || die "dotnet build failed (run: dotnet build -c Release $project/PayCallbackApi.csproj)"
fi
[ -f "$dll" ] || die "no $dll (build it, or drop --no-build)"

stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RESULTS_DIR"
RESULTS_DIR=$(cd "$RESULTS_DIR" && pwd)
run_dir=$RESULTS_DIR/$stamp
report=$RESULTS_DIR/$stamp.md
mkdir -p "$run_dir"
run_id=$(python3 -c 'import time; n=int(time.time()); d="0123456789abcdefghijklmnopqrstuvwxyz"; s=""
while n: n, r = divmod(n, 36); s = d[r] + s
print(s)')

echo "compare.sh: tool=$TOOL threads=$THREADS duration=${DURATION}s latency=${PROVIDER_LATENCY_MS}ms modes='$MODES' -> $run_dir" >&2

mode_dirs=()
for mode in $MODES; do
  dir=$run_dir/$mode
  mkdir -p "$dir"
  mode_dirs+=("$dir")
  meta=$dir/meta.env
  {
    echo "mode=$mode"; echo "tool=$TOOL"; echo "threads=$THREADS"; echo "duration_s=$DURATION"
    echo "rampup_s=$([ "$TOOL" = jmeter ] && echo "$RAMPUP" || echo 0)"; echo "provider_latency_ms=$PROVIDER_LATENCY_MS"; echo "drain_cap_s=$DRAIN_CAP"; echo "stuck_after_s=$STUCK_AFTER"
  } > "$meta"

  # Redis: fresh, empty, loopback only, no persistence.
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --protected-mode yes --save "" --appendonly no \
    --logfile "$dir/redis.log" --daemonize no >/dev/null 2>&1 &
  redis_pid=$!
  for _ in $(seq 1 100); do rcli PING 2>/dev/null | grep -q PONG && break; sleep 0.1; done
  rcli PING 2>/dev/null | grep -q PONG || die "redis-server did not start on 127.0.0.1:$redis_port (see $dir/redis.log)"
  rcli FLUSHALL >/dev/null

  # The app, straight from the built dll with the project directory as content root (as `dotnet run` does), so
  # $app_pid is the app itself. Bash starts background commands with SIGINT ignored, and .NET keeps an inherited
  # ignore: `trap - INT` restores it so that SIGINT stops the app gracefully.
  app_port=$(free_port)
  echo "compare.sh: [$mode] redis 127.0.0.1:$redis_port, app http://127.0.0.1:$app_port" >&2
  start_ms=$(now_ms)
  ( trap - INT QUIT; exec env ConnectionStrings__Redis="127.0.0.1:$redis_port" \
    PayCallback__SigningKey="$SIGNING_KEY" \
    PayCallback__Mode="$mode" \
    PayCallback__ProviderLatencyMs="$PROVIDER_LATENCY_MS" \
    PayCallback__DiagnosticsIntervalMs=1000 \
    DOTNET_ENVIRONMENT=Production ASPNETCORE_ENVIRONMENT=Production \
    Logging__Console__FormatterName=simple \
    Logging__Console__FormatterOptions__SingleLine=true \
    Logging__Console__FormatterOptions__TimestampFormat="HH:mm:ss.fff " \
    dotnet "$dll" --urls "http://127.0.0.1:$app_port" --contentRoot "$project" ) >"$dir/app.log" 2>&1 &
  app_pid=$!
  ready=0
  for _ in $(seq 1 240); do   # up to 60 s
    kill -0 "$app_pid" 2>/dev/null || die "[$mode] the app exited during start-up (see $dir/app.log)"
    if curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$app_port/health/live" 2>/dev/null; then ready=1; break; fi
    sleep 0.25
  done
  [ "$ready" = 1 ] || die "[$mode] the app did not answer /health/live within 60 s (see $dir/app.log)"
  echo "app_ready_s=$(seconds_since "$start_ms")" >> "$meta"
  echo "loadavg_before=$(loadavg)" >> "$meta"

  # The load, at once (no warm-up request).
  echo "compare.sh: [$mode] load: $TOOL, $THREADS clients, ${DURATION}s" >&2
  load_start=$(now_ms)
  set +e
  if [ "$TOOL" = jmeter ]; then
    # CSV JTL with exactly: timeStamp, elapsed, label, responseCode, success, threadName.
    JVM_ARGS=${JVM_ARGS:-"-Xms256m -Xmx1g"} timeout --kill-after=15 $((DURATION + RESPONSE_TIMEOUT_MS / 1000 + 240)) \
      "$JMETER" -n -t "$here/paycallback.jmx" -l "$dir/load.jtl" -j "$dir/jmeter.log" \
      -Jhost=127.0.0.1 -Jport="$app_port" -Jthreads="$THREADS" -Jrampup="$RAMPUP" -Jloops=-1 -Jduration="$DURATION" \
      -JsigningKey="$SIGNING_KEY" -JdupPercent="$DUP_PERCENT" -JrunId="$run_id${mode:0:1}" \
      -JconnectTimeout=$CONNECT_TIMEOUT_MS -JresponseTimeout=$RESPONSE_TIMEOUT_MS \
      -Jsummariser.interval=10 \
      -Jjmeter.save.saveservice.output_format=csv \
      -Jjmeter.save.saveservice.print_field_names=true \
      -Jjmeter.save.saveservice.timestamp_format=ms \
      -Jjmeter.save.saveservice.time=true \
      -Jjmeter.save.saveservice.label=true \
      -Jjmeter.save.saveservice.response_code=true \
      -Jjmeter.save.saveservice.successful=true \
      -Jjmeter.save.saveservice.thread_name=true \
      -Jjmeter.save.saveservice.response_message=false \
      -Jjmeter.save.saveservice.data_type=false \
      -Jjmeter.save.saveservice.assertion_results_failure_message=false \
      -Jjmeter.save.saveservice.bytes=false \
      -Jjmeter.save.saveservice.sent_bytes=false \
      -Jjmeter.save.saveservice.url=false \
      -Jjmeter.save.saveservice.thread_counts=false \
      -Jjmeter.save.saveservice.latency=false \
      -Jjmeter.save.saveservice.connect_time=false \
      -Jjmeter.save.saveservice.idle_time=false \
      >"$dir/jmeter.out" 2>&1 &
  else
    wrk_threads=$(nproc); [ "$wrk_threads" -le "$THREADS" ] || wrk_threads=$THREADS
    PAYCALLBACK_SIGNING_KEY="$SIGNING_KEY" PC_RUN_ID="$run_id${mode:0:1}" \
      timeout --kill-after=15 $((DURATION + 60)) \
      wrk -t "$wrk_threads" -c "$THREADS" -d "${DURATION}s" --timeout "$((RESPONSE_TIMEOUT_MS / 1000))s" \
      -s "$here/sign.lua" "http://127.0.0.1:$app_port" -- "" "$DUP_PERCENT" >"$dir/wrk.out" 2>&1 &
  fi
  load_pid=$!
  wait "$load_pid"; load_rc=$?
  load_pid=""
  set -e
  load_end=$(now_ms)
  { echo "load_rc=$load_rc"; echo "load_s=$(seconds_since "$load_start")"; echo "loadavg_after=$(loadavg)"; } >> "$meta"
  [ "$load_rc" = 0 ] || echo "compare.sh: [$mode] the load tool exited with $load_rc (see $dir)" >&2
  kill -0 "$app_pid" 2>/dev/null || echo "compare.sh: [$mode] the app died during the load (see $dir/app.log)" >&2

  # Until every accepted callback's effects are done. The app may still be working on requests the load tool gave up
  # on (wrk stops without waiting; a stalled Naive app answers long after), so "done" also needs the app to hold no
  # client connection any more (none established or half-closed on its port), and two such polls in a row.
  echo "compare.sh: [$mode] waiting (up to ${DRAIN_CAP}s) for pay:stats:completed == pay:stats:accepted" >&2
  drain=">$DRAIN_CAP" server_idle="" equal_since="" equal_value="" accepted=0 completed=0
  last_seen="" last_change=$load_end
  while :; do
    t=$(now_ms)
    busy=0; server_busy && busy=1
    [ "$busy" = 1 ] || [ -n "$server_idle" ] || server_idle=$(python3 -c "import sys; print(f'{max(0, int(sys.argv[1]) - int(sys.argv[2])) / 1000:.1f}')" "$t" "$load_end")
    accepted=$(counter pay:stats:accepted); completed=$(counter pay:stats:completed)
    if [ "$accepted/$completed" != "$last_seen" ]; then last_seen="$accepted/$completed" last_change=$t; fi
    if [ "$busy" = 0 ] && [ "$accepted" = "$completed" ]; then
      if [ -n "$equal_since" ] && [ "$equal_value" = "$accepted" ]; then
        drain=$(python3 -c "import sys; print(f'{max(0, int(sys.argv[1]) - int(sys.argv[2])) / 1000:.1f}')" "$equal_since" "$load_end")
        break
      fi
      equal_since=$t equal_value=$accepted
    else
      equal_since="" equal_value=""
    fi
    [ $(( ($(now_ms) - load_end) / 1000 )) -lt "$DRAIN_CAP" ] || break
    if [ "$STUCK_AFTER" -gt 0 ] && [ "$busy" = 0 ] && [ $(( (t - last_change) / 1000 )) -ge "$STUCK_AFTER" ] \
      && [ "$(grep -o 'pending=[0-9]*' "$dir/app.log" | tail -n 1)" = pending=0 ]; then
      drain="stuck"
      echo "compare.sh: [$mode] no progress for ${STUCK_AFTER}s with the app idle: $((accepted - completed)) accepted callbacks will never complete" >&2
      break
    fi
    kill -0 "$app_pid" 2>/dev/null || { echo "compare.sh: [$mode] the app is gone; effects cannot complete" >&2; break; }
    sleep 0.5
  done
  echo "server_idle_s=${server_idle:->$DRAIN_CAP}" >> "$meta"
  { echo "drain_s=$drain"; echo "accepted=$accepted"; echo "completed=$completed"; } >> "$meta"
  echo "compare.sh: [$mode] accepted=$accepted completed=$completed effects done after: $drain s" >&2

  stop_start=$(now_ms)
  stop_app
  echo "app_stop_s=$(seconds_since "$stop_start")" >> "$meta"
  stop_redis
done

trap - INT TERM
python3 "$here/analyze.py" report --out "$report" --date "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" \
  --title "PayCallbackApi load comparison ($TOOL, $THREADS clients, ${DURATION} s per mode)" \
  --settings "tool $TOOL; $THREADS concurrent clients; ${DURATION} s of load per mode; provider latency ${PROVIDER_LATENCY_MS} ms; ${DUP_PERCENT}% duplicate callbacks; timeouts: connect ${CONNECT_TIMEOUT_MS} ms, response ${RESPONSE_TIMEOUT_MS} ms; no warm-up requests" \
  --command "cd $repo && $command_line" "${mode_dirs[@]}"
echo >&2
echo "compare.sh: report written to $report (raw data in $run_dir)" >&2
