#!/usr/bin/env bash
# Drives the same signed-callback load at PayCallbackApi in each processing mode (Naive = the incident, Queue = the
# fix, Durable = the fix with both queues in Redis Streams) and prints one Markdown table: goodput (new callbacks
# answered 200 whose four effects all completed, per second of load), TPS, the share of 503s, mean/p50/p99 latency,
# the longest stall, the peak CLR thread-pool thread count, how long after the load every accepted callback's effects
# were done, accepted callbacks lost, provider calls repeated, and the CPU each process spent (app, Redis and the load
# generator during the load; app and Redis until the effects were done; the app's CPU per accepted callback). JMeter runs also get JMeter's HTML dashboard per mode
# (<run>/<mode>/dashboard/index.html) and the script draws requests/s, goodput/s and effects done/s over time for the
# modes side by side (<timestamp>.png, with python3-matplotlib).
#
#   samples/PayCallbackApi/loadtest/compare.sh                        # JMeter, 200 threads, 3,000 new callbacks/s offered, 60 s, all modes
#   samples/PayCallbackApi/loadtest/compare.sh --rate 0               # the closed loop: no think time, as fast as answered
#   samples/PayCallbackApi/loadtest/compare.sh --modes Durable --kill-at 20   # SIGKILL at 20 s, restart, count what was lost
#   samples/PayCallbackApi/loadtest/compare.sh --tool wrk -c 20 -d 10 # a quick closed-loop run with wrk + sign.lua
#   samples/PayCallbackApi/loadtest/compare.sh --modes Queue --warmup 30     # the steady state: 30 s of load first, not measured
#
# Options (each also settable through the environment variable in brackets):
#   --tool jmeter|wrk     load generator [TOOL, default jmeter]
#   -c, --threads N       concurrent clients: JMeter threads / wrk connections [THREADS, default 200]
#   -d, --duration S      seconds of load per mode [DURATION, default 60]
#   --warmup S            before the measured load, S seconds of the same load (same tool and settings, other order ids)
#                         against the same app and Redis, then a wait until its effects are done; the report covers
#                         the measured load only. For the steady state: the JIT compiles for the first ~25 s of load,
#                         which a service running for minutes no longer pays. Naive mode accepts it, but its cold-start
#                         story (its first callbacks meet a cold Redis connection) needs --warmup 0 [WARMUP, default 0]
#   --rate N              new (valid, first-time) callbacks offered per second, duplicates and bad signatures on top;
#                         JMeter only (Precise Throughput Timer); 0 = closed loop [RATE, default 3000]
#   --latency MS          PayCallback:ProviderLatencyMs, the legacy SMS/delivery block [PROVIDER_LATENCY_MS, default 20]
#   --modes "A B"         modes, in order: Naive, Queue, Durable, Bare [MODES, default "Naive Queue Durable"]; Bare = Queue
#                         mode's request path with no post-payment work (a baseline for the CPU columns: nothing to
#                         wait for or verify, so its 'effects done' and 'lost' are n/a)
#   --dup-percent N       share of duplicate callbacks [DUP_PERCENT, default 5]
#   --bad-sig-percent N   share of new callbacks sent with a bad signature (expected 401; JMeter only) [BAD_SIG_PERCENT, default 3]
#   --kill-at S           Durable mode: SIGKILL the app S seconds after the measured load's first accepted callback and start it again at once on the same
#                         port; the report says when it answered again and what was repeated or lost [KILL_AT, default 0 = no kill]
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
# answers, then the load at once (by default): no warm-up request, so Naive mode's first callbacks meet its cold Redis connection
# (Queue and Durable modes warm Redis before they listen, as designed). With --warmup S, first S s of the same load
# (files in <mode>/warmup/, run id with a 'w' so its orders differ from the measured ones) and the same wait for its
# effects as below (bounded by --drain-cap and --stuck-after), then the measured load: its CPU, latency, goodput and
# Redis counters (accepted, completed, repeats, effects.tsv: minus their values when it starts) and the pool's peak (from
# a marker line in app.log) leave the warm-up out; only 'lost' (a scan of every order) covers the warm-up's orders too. compare.sh writes <mode>/measured-load.start
# (the time in ms) as the measured load starts (profile.sh waits for it). Redis's counters are sampled every second
# from the start of the measured load (effects.tsv). After the load: poll Redis every 0.5 s until pay:stats:completed >=
# pay:stats:accepted (Durable mode may complete a job whose callback was never answered: a kill between the XADD and
# the answer), then count the accepted callbacks whose effects are incomplete (verify.lua, a scan of every order: the
# "lost" column) and stop the app (SIGINT, SIGKILL after 20 s) and Redis.
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
WARMUP=${WARMUP:-0}
RATE=${RATE:-3000}
BAD_SIG_PERCENT=${BAD_SIG_PERCENT:-3}
KILL_AT=${KILL_AT:-0}
PROVIDER_LATENCY_MS=${PROVIDER_LATENCY_MS:-20}
MODES=${MODES:-"Naive Queue Durable"}
DUP_PERCENT=${DUP_PERCENT:-5}
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
    --warmup) WARMUP=${2:?}; shift 2 ;;
    --rate) RATE=${2:?}; shift 2 ;;
    --bad-sig-percent) BAD_SIG_PERCENT=${2:?}; shift 2 ;;
    --kill-at) KILL_AT=${2:?}; shift 2 ;;
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
for n in THREADS DURATION WARMUP RATE PROVIDER_LATENCY_MS DUP_PERCENT BAD_SIG_PERCENT KILL_AT DRAIN_CAP STUCK_AFTER; do
  [[ ${!n} =~ ^[0-9]+$ ]] || die "$n must be a non-negative integer (got '${!n}')"
done
[ "$THREADS" -ge 1 ] && [ "$DURATION" -ge 2 ] || die "need at least 1 thread and 2 seconds"
[ "$WARMUP" = 0 ] || [ "$WARMUP" -ge 2 ] || die "--warmup must be 0 (none) or at least 2 seconds"
for m in $MODES; do case $m in Naive|Queue|Durable|Bare) ;; *) die "unknown mode '$m' (Naive, Queue, Durable or Bare)" ;; esac; done
[ "$DUP_PERCENT" -lt 100 ] && [ "$BAD_SIG_PERCENT" -lt 100 ] || die "--dup-percent and --bad-sig-percent must be under 100"
[ "$KILL_AT" = 0 ] || [ "$KILL_AT" -lt "$DURATION" ] || die "--kill-at must be within the load (under --duration)"
if [ "$TOOL" = wrk ] && [ "$RATE" != 0 ]; then echo "compare.sh: wrk has no fixed rate here: running the closed loop (--rate 0)" >&2; RATE=0; fi
# JMeter's timer paces every sample; the new, valid callbacks are (100 - dup)% x (100 - bad)% of them.
samples_rate=$(python3 -c "import math,sys; r,d,b=map(int,sys.argv[1:]); print(math.ceil(r / ((100 - d) / 100 * (100 - b) / 100)) if r else 0)" "$RATE" "$DUP_PERCENT" "$BAD_SIG_PERCENT")

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

app_pid="" redis_pid="" load_pid="" sampler_pid="" killer_pid="" cpu_tracker_pid=""

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

stop_bg() {  # a helper loop (sampler, killer): its pid variable's name
  local pid=${!1}
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  printf -v "$1" '%s' ""
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  stop_bg killer_pid
  stop_bg sampler_pid
  stop_bg cpu_tracker_pid
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
# CPU time from /proc (clock ticks: utime and stime of a process, summed over a process tree for the load tool).
clk_tck=$(getconf CLK_TCK)
cpu_of() {  # pid -> "user system" seconds of that process (0 0 when it is gone)
  local stat; stat=$(cat "/proc/$1/stat" 2>/dev/null) || { echo "0 0"; return; }
  echo "${stat##*) }" | awk -v hz="$clk_tck" '{ printf "%.2f %.2f\n", $12 / hz, $13 / hz }'
}
tree_cpu() {  # pid -> "user system" seconds of that process and all its descendants still running
  local pids=($1) all=() next
  while [ ${#pids[@]} -gt 0 ]; do
    all+=("${pids[@]}")
    next=$(for p in "${pids[@]}"; do cat "/proc/$p/task/$p/children" 2>/dev/null; done)
    pids=($next)
  done
  for p in "${all[@]}"; do cpu_of "$p"; done | awk '{ u += $1; s += $2 } END { printf "%.2f %.2f\n", u, s }'
}
track_cpu() {  # pid file: every 0.5 s, the process tree's CPU so far into file, until the process is gone
  while kill -0 "$1" 2>/dev/null; do tree_cpu "$1" > "$2.tmp" && mv "$2.tmp" "$2"; sleep 0.5; done
}
cpu_delta() { python3 -c "import sys; a=[float(x) for x in sys.argv[1].split()]; b=[float(x) for x in sys.argv[2].split()]; print(f'{b[0]-a[0]:.2f} {b[1]-a[1]:.2f}')" "$1" "$2"; }
rcli() { timeout 5 redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
# True while the app holds a client connection (a request in flight, or a keep-alive connection not yet closed).
if command -v ss >/dev/null 2>&1; then
  server_busy() { [ -n "$(ss -Htn state established state close-wait state syn-recv "( sport = :$app_port )" 2>/dev/null | head -n 1)" ]; }
else
  echo "compare.sh: 'ss' (iproute2) not found: cannot see requests still in flight after the load" >&2
  server_busy() { return 1; }
fi
counter() { local v; v=$(rcli --raw GET "$1" 2>/dev/null) || v=""; echo "${v:-0}"; }
verify() { timeout 120 redis-cli -h 127.0.0.1 -p "$redis_port" --raw --eval "$here/verify.lua"; }

# The app, straight from the built dll with the project directory as content root (as `dotnet run` does), so $app_pid
# is the app itself, on $app_port, logging to $2 (appended: a restarted app continues the same log). Bash starts
# background commands with SIGINT ignored, and .NET keeps an inherited ignore: `trap - INT` restores it so that SIGINT
# stops the app gracefully. Returns once /health/live answers (at most 60 s).
start_app() {  # mode log
  ( trap - INT QUIT; exec env ConnectionStrings__Redis="127.0.0.1:$redis_port" \
    PayCallback__SigningKey="$SIGNING_KEY" \
    PayCallback__Mode="$1" \
    PayCallback__ProviderLatencyMs="$PROVIDER_LATENCY_MS" \
    PayCallback__DiagnosticsIntervalMs=1000 \
    DOTNET_ENVIRONMENT=Production ASPNETCORE_ENVIRONMENT=Production \
    Logging__Console__FormatterName=simple \
    Logging__Console__FormatterOptions__SingleLine=true \
    Logging__Console__FormatterOptions__TimestampFormat="HH:mm:ss.fff " \
    dotnet "$dll" --urls "http://127.0.0.1:$app_port" --contentRoot "$project" ) >>"$2" 2>&1 &
  app_pid=$!
  for _ in $(seq 1 240); do   # up to 60 s
    kill -0 "$app_pid" 2>/dev/null || die "[$1] the app exited during start-up (see $2)"
    if curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$app_port/health/live" 2>/dev/null; then return 0; fi
    sleep 0.25
  done
  die "[$1] the app did not answer /health/live within 60 s (see $2)"
}

# Redis's counters every second, from the start of the load until the drain is over: ms accepted completed, each
# minus its value when the load started (a warm-up's counts are not the measured load's).
sample_counters() {  # file accepted0 completed0
  while :; do
    printf '%s %s %s\n' "$(now_ms)" "$(( $(counter pay:stats:accepted) - $2 ))" "$(( $(counter pay:stats:completed) - $3 ))" >> "$1"
    sleep 1
  done
}

# The load tool in the background ($load_pid), writing its files into a directory.
start_load() {  # dir duration run-id
  if [ "$TOOL" = jmeter ]; then
    # CSV JTL with JMeter's default columns (what its HTML dashboard needs) and a header line.
    JVM_ARGS=${JVM_ARGS:-"-Xms256m -Xmx1g"} timeout --kill-after=15 $(($2 + RESPONSE_TIMEOUT_MS / 1000 + 240)) \
      "$JMETER" -n -t "$here/paycallback.jmx" -l "$1/load.jtl" -j "$1/jmeter.log" \
      -Jhost=127.0.0.1 -Jport="$app_port" -Jthreads="$THREADS" -Jrampup="$RAMPUP" -Jloops=-1 -Jduration="$2" \
      $([ "$samples_rate" = 0 ] || echo "-Jrate=$samples_rate") \
      -JsigningKey="$SIGNING_KEY" -JdupPercent="$DUP_PERCENT" -JbadSigPercent="$BAD_SIG_PERCENT" -JrunId="$3" \
      -JconnectTimeout=$CONNECT_TIMEOUT_MS -JresponseTimeout=$RESPONSE_TIMEOUT_MS \
      -Jsummariser.interval=10 \
      -Jjmeter.save.saveservice.output_format=csv \
      -Jjmeter.save.saveservice.print_field_names=true \
      -Jjmeter.save.saveservice.timestamp_format=ms \
      >"$1/jmeter.out" 2>&1 &
  else
    local wrk_threads; wrk_threads=$(nproc); [ "$wrk_threads" -le "$THREADS" ] || wrk_threads=$THREADS
    PAYCALLBACK_SIGNING_KEY="$SIGNING_KEY" PC_RUN_ID="$3" \
      timeout --kill-after=15 $(($2 + 60)) \
      wrk -t "$wrk_threads" -c "$THREADS" -d "${2}s" --timeout "$((RESPONSE_TIMEOUT_MS / 1000))s" \
      -s "$here/sign.lua" "http://127.0.0.1:$app_port" -- "" "$DUP_PERCENT" >"$1/wrk.out" 2>&1 &
  fi
  load_pid=$!
}

# Until every accepted callback's effects are done (Redis's counters, whatever load they came from). The app may still
# be working on requests the load tool gave up on (wrk stops without waiting; a stalled Naive app answers long after),
# so "done" also needs the app to hold no client connection any more (none established or half-closed on its port),
# and two such polls in a row. Sets drain (seconds after the load's end, ">cap" or "stuck"), server_idle, accepted and
# completed (Redis's counters as they are). Bare mode: only the requests still in flight (up to 10 s).
wait_effects() {  # load-end-ms label
  local t busy equal_since="" equal_value="" last_seen="" last_change=$1
  drain=">$DRAIN_CAP" server_idle="" accepted=0 completed=0
  if [ "$mode" = Bare ]; then
    # No post-payment work: nothing to wait for but the requests still in flight (up to 10 s).
    for _ in $(seq 1 40); do server_busy || break; sleep 0.25; done
    accepted=$(counter pay:stats:accepted); completed=$accepted drain="n/a" server_idle=$(seconds_since "$1")
    return 0
  fi
  echo "compare.sh: [$2] waiting (up to ${DRAIN_CAP}s) for pay:stats:completed >= pay:stats:accepted" >&2
  while :; do
    t=$(now_ms)
    busy=0; server_busy && busy=1
    [ "$busy" = 1 ] || [ -n "$server_idle" ] || server_idle=$(python3 -c "import sys; print(f'{max(0, int(sys.argv[1]) - int(sys.argv[2])) / 1000:.1f}')" "$t" "$1")
    accepted=$(counter pay:stats:accepted); completed=$(counter pay:stats:completed)
    if [ "$accepted/$completed" != "$last_seen" ]; then last_seen="$accepted/$completed" last_change=$t; fi
    if [ "$busy" = 0 ] && [ "$completed" -ge "$accepted" ]; then
      # Counters level twice in a row; after a kill, completions of never-answered callbacks can make them level
      # early, so the scan of the accepted orders must agree too.
      if [ -n "$equal_since" ] && [ "$equal_value" = "$accepted" ] && { [ "$killed" = 0 ] || [ "$(verify | sed -n 2p)" = 0 ]; }; then
        drain=$(python3 -c "import sys; print(f'{max(0, int(sys.argv[1]) - int(sys.argv[2])) / 1000:.1f}')" "$equal_since" "$1")
        break
      fi
      equal_since=$t equal_value=$accepted
    else
      equal_since="" equal_value=""
    fi
    [ $(( ($(now_ms) - $1) / 1000 )) -lt "$DRAIN_CAP" ] || break
    if [ "$STUCK_AFTER" -gt 0 ] && [ "$busy" = 0 ] && [ $(( (t - last_change) / 1000 )) -ge "$STUCK_AFTER" ] \
      && [ "$(grep -o 'pending=[0-9]*' "$dir/app.log" | tail -n 1)" = pending=0 ]; then
      drain="stuck"
      echo "compare.sh: [$2] no progress for ${STUCK_AFTER}s with the app idle: $((accepted - completed)) accepted callbacks will never complete" >&2
      break
    fi
    kill -0 "$app_pid" 2>/dev/null || { echo "compare.sh: [$2] the app is gone; effects cannot complete" >&2; break; }
    sleep 0.5
  done
}

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

echo "compare.sh: tool=$TOOL threads=$THREADS duration=${DURATION}s warmup=${WARMUP}s latency=${PROVIDER_LATENCY_MS}ms modes='$MODES' -> $run_dir" >&2

mode_dirs=()
for mode in $MODES; do
  dir=$run_dir/$mode
  mkdir -p "$dir"
  mode_dirs+=("$dir")
  meta=$dir/meta.env
  {
    echo "mode=$mode"; echo "tool=$TOOL"; echo "threads=$THREADS"; echo "duration_s=$DURATION"
    echo "rampup_s=$([ "$TOOL" = jmeter ] && echo "$RAMPUP" || echo 0)"; echo "provider_latency_ms=$PROVIDER_LATENCY_MS"; echo "drain_cap_s=$DRAIN_CAP"; echo "stuck_after_s=$STUCK_AFTER"
    echo "rate=$RATE"; echo "samples_rate=$samples_rate"; echo "dup_percent=$DUP_PERCENT"; echo "bad_sig_percent=$BAD_SIG_PERCENT"
    echo "kill_at_s=$([ "$mode" = Durable ] && echo "$KILL_AT" || echo 0)"; echo "warmup_s=$WARMUP"
  } > "$meta"

  # Redis: fresh, empty, loopback only, no persistence.
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --protected-mode yes --save "" --appendonly no \
    --logfile "$dir/redis.log" --daemonize no >/dev/null 2>&1 &
  redis_pid=$!
  for _ in $(seq 1 100); do rcli PING 2>/dev/null | grep -q PONG && break; sleep 0.1; done
  rcli PING 2>/dev/null | grep -q PONG || die "redis-server did not start on 127.0.0.1:$redis_port (see $dir/redis.log)"
  rcli FLUSHALL >/dev/null

  app_port=$(free_port)
  echo "compare.sh: [$mode] redis 127.0.0.1:$redis_port, app http://127.0.0.1:$app_port" >&2
  start_ms=$(now_ms)
  start_app "$mode" "$dir/app.log"
  echo "app_ready_s=$(seconds_since "$start_ms")" >> "$meta"
  # The warm-up: the same load for WARMUP s with its own run id (other orders), its files in warmup/, then the same
  # wait for its effects. The measured load's counters are taken relative to Redis's counters after it.
  killed=0 accepted0=0 completed0=0 repeats0=0
  if [ "$WARMUP" -gt 0 ]; then
    mkdir -p "$dir/warmup"
    echo "compare.sh: [$mode] warm-up: $TOOL, $THREADS clients, ${WARMUP}s" >&2
    sample_counters "$dir/warmup/effects.tsv" 0 0 & sampler_pid=$!
    set +e
    start_load "$dir/warmup" "$WARMUP" "$run_id${mode:0:1}w"
    wait "$load_pid"; warmup_rc=$?
    load_pid=""
    set -e
    warmup_end=$(now_ms)
    [ "$warmup_rc" = 0 ] || echo "compare.sh: [$mode] the warm-up's load tool exited with $warmup_rc (see $dir/warmup)" >&2
    wait_effects "$warmup_end" "$mode warm-up"
    stop_bg sampler_pid
    [ "$mode" = Bare ] || case $drain in
      ">"*|stuck) echo "compare.sh: [$mode] the warm-up's effects are not all done ($((accepted - completed)) left); measuring anyway" >&2 ;;
    esac
    accepted0=$(counter pay:stats:accepted) completed0=$(counter pay:stats:completed)
    repeats0=$(( $(counter pay:stats:repeats:sms) + $(counter pay:stats:repeats:delivery) ))
    { echo "warmup_rc=$warmup_rc"; echo "warmup_drain_s=$drain"; echo "warmup_accepted=$accepted0"; echo "warmup_completed=$completed0"
      echo "warmup_repeats=$repeats0"; } >> "$meta"
    echo "compare.sh: [$mode] warm-up: accepted=$accepted0 completed=$completed0 effects done after: $drain s" >&2
    # analyze.py counts the app's thread-pool samples from here on.
    echo "--- compare.sh: the measured load starts ---" >> "$dir/app.log"
  fi
  echo "loadavg_before=$(loadavg)" >> "$meta"

  # The measured load, at once (no warm-up request unless --warmup).
  echo "compare.sh: [$mode] load: $TOOL, $THREADS clients, ${DURATION}s" >&2
  load_start=$(now_ms)
  echo "$load_start" > "$dir/measured-load.start"
  cpu_app0=$(cpu_of "$app_pid") cpu_redis0=$(cpu_of "$redis_pid")
  sample_counters "$dir/effects.tsv" "$accepted0" "$completed0" & sampler_pid=$!
  set +e
  start_load "$dir" "$DURATION" "$run_id${mode:0:1}"
  echo "0 0" > "$dir/loadgen.cpu"; track_cpu "$load_pid" "$dir/loadgen.cpu" & cpu_tracker_pid=$!
  if [ "$mode" = Durable ] && [ "$KILL_AT" -gt 0 ]; then
    # A crash mid-load: SIGKILL (no shutdown code runs) KILL_AT s after the first accepted callback (the load tool
    # takes a few seconds to start sending), then the same app started again on the same port.
    first_ms=""
    while kill -0 "$load_pid" 2>/dev/null && [ -z "$first_ms" ]; do
      [ "$(counter pay:stats:accepted)" -le "$accepted0" ] || first_ms=$(now_ms)
      sleep 0.1
    done
    while kill -0 "$load_pid" 2>/dev/null && [ -n "$first_ms" ] && [ $(( $(now_ms) - first_ms )) -lt $((KILL_AT * 1000)) ]; do sleep 0.1; done
    if kill -0 "$load_pid" 2>/dev/null; then
      kill_ms=$(now_ms)
      kill -KILL "$app_pid" 2>/dev/null || true
      wait "$app_pid" 2>/dev/null || true
      echo "compare.sh: [$mode] killed the app (SIGKILL) $(python3 -c "import sys; print(f'{(int(sys.argv[1]) - int(sys.argv[2])) / 1000:.1f}')" "$kill_ms" "$first_ms") s after the first accepted callback; starting it again" >&2
      echo "--- compare.sh: SIGKILL here; the app starts again ---" >> "$dir/app.log"
      { echo "killed_at_s=$(python3 -c "import sys; print(f'{(int(sys.argv[1]) - int(sys.argv[2])) / 1000:.1f}')" "$kill_ms" "$first_ms")"; echo "killed_at_ms=$kill_ms"
        echo "killed_accepted=$(( $(counter pay:stats:accepted) - accepted0 ))"; echo "killed_completed=$(( $(counter pay:stats:completed) - completed0 ))"; } >> "$meta"
      start_app "$mode" "$dir/app.log"
      echo "restarted_after_s=$(seconds_since "$kill_ms")" >> "$meta"
      killed=1
    fi
  fi
  wait "$load_pid"; load_rc=$?
  load_pid=""
  set -e
  load_end=$(now_ms)
  cpu_app1=$(cpu_of "$app_pid") cpu_redis1=$(cpu_of "$redis_pid")
  stop_bg cpu_tracker_pid
  # The load tool's CPU (timeout -> JMeter's JVM, or wrk): its process tree's last reading, taken every 0.5 s while it
  # ran, so up to half a second of its shutdown is missing. After a kill the app's figures are the new process's.
  { echo "cpu_app_load=$(cpu_delta "$cpu_app0" "$cpu_app1")"; echo "cpu_redis_load=$(cpu_delta "$cpu_redis0" "$cpu_redis1")"
    echo "cpu_loadgen=$(cat "$dir/loadgen.cpu")"; } >> "$meta"
  { echo "load_rc=$load_rc"; echo "load_s=$(seconds_since "$load_start")"; echo "loadavg_after=$(loadavg)"; } >> "$meta"
  [ "$load_rc" = 0 ] || echo "compare.sh: [$mode] the load tool exited with $load_rc (see $dir)" >&2
  kill -0 "$app_pid" 2>/dev/null || echo "compare.sh: [$mode] the app died during the load (see $dir/app.log)" >&2

  # Until every accepted callback's effects are done (the warm-up's too: they were, unless its wait gave up).
  wait_effects "$load_end" "$mode"
  # The measured load's own counts.
  accepted=$((accepted - accepted0)) completed=$((completed - completed0))
  [ "$mode" != Bare ] || completed=$accepted
  stop_bg sampler_pid
  { echo "cpu_app_total=$(cpu_delta "$cpu_app0" "$(cpu_of "$app_pid")")"; echo "cpu_redis_total=$(cpu_delta "$cpu_redis0" "$(cpu_of "$redis_pid")")"; } >> "$meta"
  echo "server_idle_s=${server_idle:->$DRAIN_CAP}" >> "$meta"
  if [ "$mode" = Bare ]; then
    v=$(printf '%s\nn/a\n' "$accepted")   # nothing to verify: the claims are all it did
  else
    v=$(verify)
  fi
  { echo "verified_accepted=$(echo "$v" | sed -n 1p)"; echo "lost=$(echo "$v" | sed -n 2p)"
    echo "lost_sample=$(echo "$v" | sed -n '3,$p' | tr '\n' ' ')"
    echo "repeats=$(( $(counter pay:stats:repeats:sms) + $(counter pay:stats:repeats:delivery) - repeats0 ))"; } >> "$meta"
  { echo "drain_s=$drain"; echo "accepted=$accepted"; echo "completed=$completed"; } >> "$meta"
  echo "compare.sh: [$mode] accepted=$accepted completed=$completed effects done after: $drain s" >&2

  stop_start=$(now_ms)
  stop_app
  echo "app_stop_s=$(seconds_since "$stop_start")" >> "$meta"
  stop_redis
  if [ "$TOOL" = jmeter ] && [ -s "$dir/load.jtl" ]; then
    # JMeter's HTML dashboard from the JTL, generated after the measurement (it costs CPU). Regenerate with:
    #   ../shared/tools/jmeter -g <run>/<mode>/load.jtl -o <run>/<mode>/dashboard
    JVM_ARGS=${JVM_ARGS:-"-Xms256m -Xmx1g"} timeout 600 "$JMETER" -g "$dir/load.jtl" -o "$dir/dashboard" -j "$dir/jmeter-dashboard.log" \
      -Jjmeter.save.saveservice.output_format=csv -Jjmeter.save.saveservice.timestamp_format=ms >/dev/null 2>&1 \
      || echo "compare.sh: [$mode] the JMeter dashboard could not be generated (see $dir/jmeter-dashboard.log)" >&2
  fi
done

trap - INT TERM
offered=$([ "$RATE" = 0 ] && echo "closed loop (no think time)" || echo "$RATE new callbacks/s offered ($samples_rate samples/s with duplicates and bad signatures)")
python3 "$here/analyze.py" report --out "$report" --date "$(date -u '+%Y-%m-%d %H:%M:%S UTC')" \
  --title "PayCallbackApi load comparison ($TOOL, $THREADS clients, ${DURATION} s per mode, $([ "$RATE" = 0 ] && echo "closed loop" || echo "$RATE new callbacks/s offered"))" \
  --settings "tool $TOOL; $THREADS concurrent clients; $offered; ${DURATION} s of load per mode; provider latency ${PROVIDER_LATENCY_MS} ms; ${DUP_PERCENT}% duplicate callbacks; $([ "$TOOL" = jmeter ] && echo "${BAD_SIG_PERCENT}% of new callbacks with a bad signature; ")$([ "$KILL_AT" != 0 ] && echo "Durable mode killed (SIGKILL) ${KILL_AT} s into the load and restarted; ")timeouts: connect ${CONNECT_TIMEOUT_MS} ms, response ${RESPONSE_TIMEOUT_MS} ms; $([ "$WARMUP" = 0 ] && echo "no warm-up requests" || echo "${WARMUP} s warm-up load before the measured window ('lost' also scans the warm-up's orders)")" \
  --command "cd $repo && $command_line" "${mode_dirs[@]}"
plot_python=""
for py in python3 /usr/bin/python3; do
  if command -v "$py" >/dev/null 2>&1 && "$py" -c 'import matplotlib' 2>/dev/null; then plot_python=$py; break; fi
done
if [ -z "$plot_python" ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  apt_install python3-matplotlib && /usr/bin/python3 -c 'import matplotlib' 2>/dev/null && plot_python=/usr/bin/python3
fi
if [ -n "$plot_python" ]; then
  "$plot_python" "$here/analyze.py" plot --out "$RESULTS_DIR/$stamp.png" \
    --title "PayCallbackApi: $THREADS clients, $([ "$RATE" = 0 ] && echo "closed loop" || echo "$RATE new callbacks/s offered"); the load tool, Redis and the app share $(nproc) cores" "${mode_dirs[@]}" >/dev/null \
    && echo "compare.sh: plot written to $RESULTS_DIR/$stamp.png" >&2
else
  echo "compare.sh: no plot (python3-matplotlib is not installed: apt-get install -y python3-matplotlib)" >&2
fi
echo >&2
echo "compare.sh: report written to $report (raw data in $run_dir)" >&2
