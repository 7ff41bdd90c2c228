#!/usr/bin/env bash
# Graceful shutdown under load: does a deploy (SIGTERM) lose callbacks the app already answered 200?
#
# Starts a throwaway redis-server and the app in Queue mode (Release build, its own process, the host's default
# shutdown timeout), drives the JMeter plan (paycallback.jmx) at it, sends SIGTERM to the app once the load has run
# for --sigterm-after seconds, keeps the load going while the app shuts down (as a gateway keeps calling during a
# deploy), and once the app has exited stops JMeter and reads Redis directly: every callback answered
# 200 {"code":"SUCCESS"} must have its four effects (settlement, message, sms, delivery) recorded on its order.
# Prints answered 200 / effects complete / incomplete, the shutdown's duration and the queues' drain/abandon log lines.
# Exits 0 only if nothing answered 200 is incomplete and the app exited by itself.
#
#   samples/PayCallbackApi/loadtest/sigterm.sh                  # 200 JMeter threads, SIGTERM 15 s into the load
#   samples/PayCallbackApi/loadtest/sigterm.sh --project DIR --no-build   # another checkout's built sample (a "before")
#
# Options (each also settable through the environment variable in brackets):
#   -c, --threads N        JMeter threads [THREADS, default 200]
#   --sigterm-after S      seconds of load (from the first accepted callback) before SIGTERM [SIGTERM_AFTER, default 15]
#   --exit-cap S           SIGKILL the app if it is still running S seconds after SIGTERM [EXIT_CAP, default 120]
#   --latency MS           PayCallback:ProviderLatencyMs [PROVIDER_LATENCY_MS, default 20]
#   --dup-percent N        share of duplicate callbacks [DUP_PERCENT, default 10]
#   --results-dir DIR      where <timestamp>-sigterm.md and <timestamp>-sigterm/ go [RESULTS_DIR, default loadtest/results]
#   --project DIR          the PayCallbackApi project directory to run [PROJECT, default this sample]
#   --no-build             use the existing Release build [NO_BUILD=1]
#   JMETER=path            the jmeter launcher (default: <repo>/../shared/tools/jmeter, else jmeter on PATH)
#   SIGNING_KEY=...        the HMAC key given to both the app and JMeter (default: a fixed test key)
#
# Everything listens on 127.0.0.1 only; every wait is bounded; an EXIT/INT/TERM trap stops whatever is still running.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../../.." && pwd)
command_line="$(printf '%q ' "$0" "$@")"
command_line=${command_line% }

THREADS=${THREADS:-200}
SIGTERM_AFTER=${SIGTERM_AFTER:-15}
EXIT_CAP=${EXIT_CAP:-120}
PROVIDER_LATENCY_MS=${PROVIDER_LATENCY_MS:-20}
DUP_PERCENT=${DUP_PERCENT:-10}
RESULTS_DIR=${RESULTS_DIR:-$here/results}
PROJECT=${PROJECT:-$here/..}
NO_BUILD=${NO_BUILD:-0}
SIGNING_KEY=${SIGNING_KEY:-loadtest-signing-key-0123456789}
CONNECT_TIMEOUT_MS=5000
RESPONSE_TIMEOUT_MS=30000

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
die() { echo "sigterm.sh: $*" >&2; exit 2; }
say() { echo "sigterm.sh: $*" >&2; }

while [ $# -gt 0 ]; do
  case $1 in
    -c|--threads) THREADS=${2:?}; shift 2 ;;
    --sigterm-after) SIGTERM_AFTER=${2:?}; shift 2 ;;
    --exit-cap) EXIT_CAP=${2:?}; shift 2 ;;
    --latency) PROVIDER_LATENCY_MS=${2:?}; shift 2 ;;
    --dup-percent) DUP_PERCENT=${2:?}; shift 2 ;;
    --results-dir) RESULTS_DIR=${2:?}; shift 2 ;;
    --project) PROJECT=${2:?}; shift 2 ;;
    --no-build) NO_BUILD=1; shift ;;
    -h|--help) usage; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
  esac
done

for n in THREADS SIGTERM_AFTER EXIT_CAP PROVIDER_LATENCY_MS DUP_PERCENT; do
  [[ ${!n} =~ ^[0-9]+$ ]] || die "$n must be a non-negative integer (got '${!n}')"
done
[ "$THREADS" -ge 1 ] && [ "$SIGTERM_AFTER" -ge 1 ] && [ "$EXIT_CAP" -ge 1 ] || die "need at least 1 thread, 1 s of load and 1 s of exit cap"
PROJECT=$(cd "$PROJECT" && pwd) || die "no project directory '$PROJECT'"
[ -f "$PROJECT/PayCallbackApi.csproj" ] || die "$PROJECT has no PayCallbackApi.csproj"

# ---------------------------------------------------------------------------------------------------------------------
# Prerequisites (installed with apt-get when root, as compare.sh does).

apt_install() {
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    say "installing $*"
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
JMETER=${JMETER:-}
if [ -z "$JMETER" ]; then
  if [ -x "$repo/../shared/tools/jmeter" ]; then JMETER=$repo/../shared/tools/jmeter
  elif command -v jmeter >/dev/null 2>&1; then JMETER=$(command -v jmeter)
  else die "no JMeter: set JMETER=/path/to/jmeter (5.6+)"; fi
fi
command -v java >/dev/null 2>&1 || apt_install default-jre-headless

# ---------------------------------------------------------------------------------------------------------------------
# Cleanup: everything this script starts is tracked here and stopped on exit, however the script ends.

app_pid="" redis_pid="" load_pid="" jmeter_port=""

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
  # First JMeter's own "Shutdown" command on its loopback UDP port (threads finish their sample, the results file is
  # closed); then TERM to `timeout`, which passes it on to JMeter; then KILL.
  if [ -n "$jmeter_port" ] && kill -0 "$load_pid" 2>/dev/null; then
    printf 'Shutdown' >"/dev/udp/127.0.0.1/$jmeter_port" 2>/dev/null || true
    for _ in $(seq 1 60); do kill -0 "$load_pid" 2>/dev/null || break; sleep 0.5; done
  fi
  if kill -0 "$load_pid" 2>/dev/null; then
    say "JMeter did not stop within 30 s of its Shutdown command; terminating it"
    kill -TERM "$load_pid" 2>/dev/null || true
    for _ in $(seq 1 20); do kill -0 "$load_pid" 2>/dev/null || break; sleep 0.5; done
    kill -KILL "$load_pid" 2>/dev/null || true
  fi
  wait "$load_pid" 2>/dev/null || true
  load_pid=""
}

cleanup() {
  local rc=$?
  trap - EXIT INT TERM
  if [ -n "$app_pid" ] && kill -0 "$app_pid" 2>/dev/null; then kill -KILL "$app_pid" 2>/dev/null || true; fi
  stop_load
  stop_redis
  exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted; cleaning up"; exit 130' INT
trap 'say "terminated; cleaning up"; exit 143' TERM

now_ms() { date +%s%3N; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
free_udp_port() { python3 -c 'import socket; s=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'; }
rcli() { timeout 5 redis-cli -h 127.0.0.1 -p "$redis_port" "$@"; }
counter() { local v; v=$(rcli --raw GET "$1" 2>/dev/null) || v=""; echo "${v:-0}"; }

# ---------------------------------------------------------------------------------------------------------------------

dll=$PROJECT/bin/Release/net10.0/PayCallbackApi.dll
if [ "$NO_BUILD" != 1 ]; then
  say "building $PROJECT (Release)"
  timeout 900 dotnet build "$PROJECT/PayCallbackApi.csproj" -c Release -nologo -v quiet >/dev/null \
    || die "dotnet build failed (run: dotnet build -c Release $PROJECT/PayCallbackApi.csproj)"
fi
[ -f "$dll" ] || die "no $dll (build it, or drop --no-build)"
commit=$(git -C "$PROJECT" rev-parse --short HEAD 2>/dev/null || echo unknown)

stamp=$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$RESULTS_DIR"
RESULTS_DIR=$(cd "$RESULTS_DIR" && pwd)
dir=$RESULTS_DIR/$stamp-sigterm
report=$RESULTS_DIR/$stamp-sigterm.md
mkdir -p "$dir"

# Redis: fresh, empty, loopback only, no persistence.
redis_port=$(free_port)
redis-server --port "$redis_port" --bind 127.0.0.1 --protected-mode yes --save "" --appendonly no \
  --logfile "$dir/redis.log" --daemonize no >/dev/null 2>&1 &
redis_pid=$!
for _ in $(seq 1 100); do rcli PING 2>/dev/null | grep -q PONG && break; sleep 0.1; done
rcli PING 2>/dev/null | grep -q PONG || die "redis-server did not start on 127.0.0.1:$redis_port (see $dir/redis.log)"

# The app, straight from the built dll (so $app_pid is the app itself), with the host's default shutdown timeout.
# Bash starts background commands with SIGINT ignored and .NET keeps an inherited ignore: `trap - INT QUIT TERM`
# restores the defaults before exec.
app_port=$(free_port)
say "commit $commit; redis 127.0.0.1:$redis_port; app http://127.0.0.1:$app_port; raw data in $dir"
( trap - INT QUIT TERM; exec env ConnectionStrings__Redis="127.0.0.1:$redis_port" \
  PayCallback__SigningKey="$SIGNING_KEY" \
  PayCallback__Mode=Queue \
  PayCallback__ProviderLatencyMs="$PROVIDER_LATENCY_MS" \
  DOTNET_ENVIRONMENT=Production ASPNETCORE_ENVIRONMENT=Production \
  Logging__Console__FormatterName=simple \
  Logging__Console__FormatterOptions__SingleLine=true \
  Logging__Console__FormatterOptions__TimestampFormat="HH:mm:ss.fff " \
  dotnet "$dll" --urls "http://127.0.0.1:$app_port" --contentRoot "$PROJECT" ) >"$dir/app.log" 2>&1 &
app_pid=$!
ready=0
for _ in $(seq 1 240); do   # up to 60 s
  kill -0 "$app_pid" 2>/dev/null || die "the app exited during start-up (see $dir/app.log)"
  if curl -fsS -m 2 -o /dev/null "http://127.0.0.1:$app_port/health/live" 2>/dev/null; then ready=1; break; fi
  sleep 0.25
done
[ "$ready" = 1 ] || die "the app did not answer /health/live within 60 s (see $dir/app.log)"

# The load: runs until this script stops it (its own duration is only a backstop). The JTL gets one row per sample
# with the request body (sample_variables=body) so each row names its order; autoflush writes every row at once.
jmeter_port=$(free_udp_port)
say "load: JMeter, $THREADS threads; SIGTERM ${SIGTERM_AFTER}s after the first accepted callback"
backstop=$((SIGTERM_AFTER + EXIT_CAP + 120))
JVM_ARGS=${JVM_ARGS:-"-Xms256m -Xmx1g"} timeout --kill-after=15 $((backstop + 60)) \
  "$JMETER" -n -t "$here/paycallback.jmx" -l "$dir/load.jtl" -j "$dir/jmeter.log" \
  -Jhost=127.0.0.1 -Jport="$app_port" -Jthreads="$THREADS" -Jrampup=1 -Jloops=-1 -Jduration="$backstop" \
  -JsigningKey="$SIGNING_KEY" -JdupPercent="$DUP_PERCENT" -JrunId="s$stamp" \
  -JconnectTimeout=$CONNECT_TIMEOUT_MS -JresponseTimeout=$RESPONSE_TIMEOUT_MS \
  -Jjmeterengine.nongui.port="$jmeter_port" -Jjmeterengine.nongui.maxport="$jmeter_port" \
  -Jsummariser.interval=5 \
  -Jsample_variables=body \
  -Jjmeter.save.saveservice.autoflush=true \
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
load_pid=$!

# The load has reached the app once a callback is accepted (JMeter's JVM takes a few seconds to start).
started=0
for _ in $(seq 1 240); do   # up to 60 s
  kill -0 "$load_pid" 2>/dev/null || die "JMeter exited before its load reached the app (see $dir/jmeter.out)"
  kill -0 "$app_pid" 2>/dev/null || die "the app died before the load reached it (see $dir/app.log)"
  [ "$(counter pay:stats:accepted)" -gt 0 ] && { started=1; break; }
  sleep 0.25
done
[ "$started" = 1 ] || die "no callback accepted within 60 s of starting JMeter (see $dir/jmeter.out)"
load_start=$(now_ms)
sleep "$SIGTERM_AFTER"
kill -0 "$app_pid" 2>/dev/null || die "the app died during the load (see $dir/app.log)"

sigterm_ms=$(now_ms)
accepted_at_sigterm=$(counter pay:stats:accepted); completed_at_sigterm=$(counter pay:stats:completed)
say "SIGTERM -> app (pid $app_pid) after $(( (sigterm_ms - load_start) / 1000 )) s of load; accepted so far $accepted_at_sigterm, completed $completed_at_sigterm"
kill -TERM "$app_pid"
exited_by_itself=0
for _ in $(seq 1 $((EXIT_CAP * 10))); do
  kill -0 "$app_pid" 2>/dev/null || { exited_by_itself=1; break; }
  sleep 0.1
done
exit_ms=$(now_ms)
if [ "$exited_by_itself" = 0 ]; then
  say "the app was still running ${EXIT_CAP}s after SIGTERM; killing it"
  kill -KILL "$app_pid" 2>/dev/null || true
fi
set +e; wait "$app_pid"; app_rc=$?; set -e
app_pid=""
say "app exited (code $app_rc) $(( exit_ms - sigterm_ms )) ms after SIGTERM; stopping JMeter"
stop_load

RUN_DIR=$dir REDIS_PORT=$redis_port REPORT=$report COMMIT=$commit COMMAND="cd $repo && $command_line" \
ACCEPTED_AT_SIGTERM=$accepted_at_sigterm COMPLETED_AT_SIGTERM=$completed_at_sigterm EXIT_AFTER_MS=$(( exit_ms - sigterm_ms )) \
APP_RC=$app_rc EXITED_BY_ITSELF=$exited_by_itself THREADS=$THREADS SIGTERM_AFTER=$SIGTERM_AFTER \
PROVIDER_LATENCY_MS=$PROVIDER_LATENCY_MS DUP_PERCENT=$DUP_PERCENT python3 - <<'PY'
import csv, json, os, re, socket, sys
from collections import Counter
from pathlib import Path

env = os.environ
run_dir, redis_port, report = Path(env["RUN_DIR"]), int(env["REDIS_PORT"]), Path(env["REPORT"])
exited_by_itself = env["EXITED_BY_ITSELF"] == "1"
EFFECTS = ["settlement", "message", "sms", "delivery"]

# --- JTL: which callbacks were answered 200 {"code":"SUCCESS"} (the plan's two assertions make success=true).
csv.field_size_limit(1 << 20)
codes, first_ok, retry_ok, samples = Counter(), set(), set(), 0
with open(run_dir / "load.jtl", newline="", encoding="utf-8") as f:
    for row in csv.DictReader(f):
        if not row.get("label", "").startswith("callback"):
            continue
        samples += 1
        code = row["responseCode"]
        codes[code if code.isdigit() else "no HTTP response"] += 1
        if code != "200" or row["success"] != "true":
            continue
        order = json.loads(row["body"])["orderId"]
        (first_ok if row["label"] == "callback new" else retry_ok).add(order)
retry_only = retry_ok - first_ok   # a duplicate answered 200 whose first attempt was not (503 released it, or no answer)
answered = first_ok | retry_only

# --- Redis: the order hash records each effect as '1' once done (OrderStore.EffectScript).
def resp_command(*parts):
    out = [f"*{len(parts)}\r\n".encode()]
    for p in parts:
        b = p.encode()
        out.append(f"${len(b)}\r\n".encode() + b + b"\r\n")
    return b"".join(out)

class Reader:
    def __init__(self, sock): self.f = sock.makefile("rb")
    def line(self): return self.f.readline()[:-2]
    def value(self):
        line = self.line(); kind, rest = line[:1], line[1:]
        if kind == b"*":
            n = int(rest); return None if n < 0 else [self.value() for _ in range(n)]
        if kind == b"$":
            n = int(rest)
            if n < 0: return None
            data = self.f.read(n + 2)[:-2]; return data.decode()
        if kind == b":": return int(rest)
        if kind == b"-": raise RuntimeError(rest.decode())
        return rest.decode()

sock = socket.create_connection(("127.0.0.1", redis_port), timeout=30)
reader = Reader(sock)
def pipeline(commands):
    results = []
    for i in range(0, len(commands), 2000):
        batch = commands[i:i + 2000]
        sock.sendall(b"".join(resp_command(*c) for c in batch))
        results.extend(reader.value() for _ in batch)
    return results

orders = sorted(answered)
states = pipeline([("HMGET", f"pay:order:{o}", "status", *EFFECTS) for o in orders])
incomplete = {}
for order, values in zip(orders, states):
    status, done = values[0], values[1:]
    if status is None:
        incomplete[order] = "no order in Redis"
    elif not all(v == "1" for v in done):
        incomplete[order] = "missing " + ",".join(e for e, v in zip(EFFECTS, done) if v != "1")
counters = dict(zip(["accepted", "completed"], pipeline([("GET", "pay:stats:accepted"), ("GET", "pay:stats:completed")])))
sock.close()

# --- The app's log: the shutdown, as the host and the queues report it.
log = (run_dir / "app.log").read_text(encoding="utf-8", errors="replace").splitlines()
stamp = re.compile(r"^(\d\d):(\d\d):(\d\d)\.(\d{3}) ")
def at(line):
    m = stamp.match(line)
    return None if not m else ((int(m[1]) * 60 + int(m[2])) * 60 + int(m[3])) * 1000 + int(m[4])
shutdown_lines = [l for l in log if "Application is shutting down" in l
                  or re.search(r"Queue '[^']+' (stopping|drained|stopped|draining)", l)]
begin = next((at(l) for l in log if "Application is shutting down" in l), None)
ends = [at(l) for l in shutdown_lines if re.search(r"Queue '[^']+' (drained and stopped|stopped)", l)]
log_duration = f"{(max(ends) - begin) / 1000:.1f} s" if begin is not None and ends and None not in ends else "n/a"
abandoned_lines = sum(1 for l in log if "did not complete before shutdown" in l)
rejected_stopping = sum(1 for l in log if "JobRejectedException" in l)
errors = sum(1 for l in log if re.match(r"^\S+ (fail|crit):", l))

lines = [
    f"# PayCallbackApi: SIGTERM under load ({run_dir.name})",
    "",
    f"commit {env['COMMIT']}; {env['THREADS']} JMeter threads; SIGTERM {env['SIGTERM_AFTER']} s after the first accepted callback; "
    f"provider latency {env['PROVIDER_LATENCY_MS']} ms; {env['DUP_PERCENT']}% duplicates; the host's default shutdown timeout",
    "",
    f"Command: `{env['COMMAND']}`",
    "",
    "| figure | value |",
    "| --- | --- |",
    f"| callback samples (JMeter) | {samples} ({', '.join(f'{k}: {v}' for k, v in sorted(codes.items()))}) |",
    f"| answered 200 {{\"code\":\"SUCCESS\"}}, first-time callbacks | {len(first_ok)} |",
    f"| ... plus orders first answered 200 on a duplicate (retry after a 503 or no answer) | {len(retry_only)} |",
    f"| answered 200, all (checked) | {len(answered)} |",
    f"| effects complete (all four in Redis) | {len(answered) - len(incomplete)} |",
    f"| **incomplete** | **{len(incomplete)}** |",
    f"| pay:stats:accepted / completed (every order claimed and not released) | {counters['accepted']} / {counters['completed']} |",
    f"| accepted / completed at SIGTERM | {env['ACCEPTED_AT_SIGTERM']} / {env['COMPLETED_AT_SIGTERM']} |",
    f"| SIGTERM to process exit (measured by the script) | {env['EXIT_AFTER_MS']} ms, exit code {env['APP_RC']}, exited by itself: {'yes' if exited_by_itself else 'no (killed)'} |",
    f"| shutdown in the app's log ('Application is shutting down' to the last queue stopped) | {log_duration} |",
    f"| jobs reported abandoned (log) / JobRejectedException lines / fail+crit log lines | {abandoned_lines} / {rejected_stopping} / {errors} |",
    "",
    "Shutdown log lines:",
    "",
    "```",
    *shutdown_lines,
    "```",
]
if incomplete:
    by_reason = Counter(incomplete.values())
    lines += ["", "Incomplete, by what is missing: " + "; ".join(f"{why}: {n}" for why, n in by_reason.most_common()), ""]
    lines += ["Incomplete (first 20):", ""] + [f"- {o}: {why}" for o, why in list(sorted(incomplete.items()))[:20]]
text = "\n".join(lines) + "\n"
report.write_text(text, encoding="utf-8")
print(text)
sys.exit(0 if not incomplete and exited_by_itself else 1)
PY
