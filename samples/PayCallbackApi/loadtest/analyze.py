#!/usr/bin/env python3
"""Turns the raw output of compare.sh (one directory per mode) into one Markdown table.

    analyze.py report --out RESULTS.md --command "compare.sh ..." MODE_DIR [MODE_DIR ...]
    analyze.py plot --out RESULTS.png MODE_DIR [MODE_DIR ...]   # requests/s, goodput/s, effects done/s over time
    analyze.py jtl FILE.jtl          # the load metrics of one JMeter CSV result file, as JSON
    analyze.py wrk FILE.out          # the same for the output of wrk with sign.lua
    analyze.py threads APP.log       # the peak CLR thread-pool thread count in an app log

Each MODE_DIR holds meta.env (key=value lines written by compare.sh), app.log, effects.tsv (Redis counters each second:
ms accepted completed), and load.jtl (JMeter) or wrk.out (wrk). Standard library only (Python 3.11), except `plot`,
which needs matplotlib (Debian: python3-matplotlib).

Definitions (also printed under the table):
  goodput   first-time (new, validly signed) callbacks answered 200 whose four effects all completed, per second of
            load span (JMeter: its "callback new" samples answered 200, less the accepted callbacks found incomplete
            after the drain; wrk: Redis's accepted counter, less the same);
  503 share the share of all samples answered 503 (work not accepted: queue full, or a pending claim);
  lost      accepted callbacks (a final claim) whose effects were still incomplete when the report was made;
  repeats   legacy provider calls made again for an effect not yet recorded (after a kill, or a failed recording);
  requests  completed samples (any response or error) during the load;
  TPS       requests / load span (first sample's start to last sample's end; wrk: its own duration);
  latency   over all samples (wrk: its histogram, which leaves out responses slower than --timeout);
  errors    non-200 responses + connection errors + timeouts (JMeter: unsuccessful samples);
  stall     the longest run of consecutive one-second windows whose completed-sample count is under half the median
            per-second count (with a median of 0: the longest run of empty windows). JMeter: windows start when the
            ramp-up is over and last while samples were still being started, at least for the nominal duration unless
            every response was in; wrk: from its start for its duration;
  peak pool threads   max of `threadpool threads=N` in the app log (logged every DiagnosticsIntervalMs; after a
            warm-up, from compare.sh's marker line at the measured load's start);
  effects done after  seconds from the end of the load until pay:stats:completed == pay:stats:accepted.
"""

from __future__ import annotations

import argparse
import csv
import json
import math
import os
import platform
import re
import statistics
import sys
from pathlib import Path

THREADS_RE = re.compile(r"threadpool threads=(\d+) pending=(\d+)")
# compare.sh --warmup writes this line into the app log as the measured load starts.
MEASURED_MARK = "--- compare.sh: the measured load starts ---"


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an already sorted list."""
    if not sorted_values:
        return math.nan
    rank = max(1, math.ceil(p / 100 * len(sorted_values)))
    return sorted_values[rank - 1]


def stall(per_second: list[int]) -> dict:
    """Longest run of windows under half the median count."""
    if not per_second:
        return {"seconds": None, "start": None, "median": None}
    median = statistics.median(per_second)
    # With a median of 0 (nothing completed in most windows) no window is "under half"; count the empty ones instead.
    under = (lambda n: n < median / 2) if median > 0 else (lambda n: n == 0)
    best, best_start, run, run_start = 0, None, 0, 0
    for i, n in enumerate(per_second):
        if under(n):
            if run == 0:
                run_start = i
            run += 1
            if run > best:
                best, best_start = run, run_start
        else:
            run = 0
    return {"seconds": best, "start": best_start, "median": median}


def analyze_jtl(path: Path, duration_s: float | None = None, rampup_s: float = 0) -> dict:
    starts, ends, elapsed = [], [], []
    codes: dict[str, int] = {}
    errors = 0
    labels: dict[str, int] = {}
    new_ok = 0
    new_ok_ends: list[int] = []
    with open(path, newline="", encoding="utf-8", errors="replace") as f:
        for row in csv.DictReader(f):
            label = row.get("label", "")
            if not label.startswith("callback"):
                continue
            try:
                ts, el = int(row["timeStamp"]), int(row["elapsed"])
            except (KeyError, ValueError):
                continue
            starts.append(ts)
            ends.append(ts + el)
            elapsed.append(el)
            code = row.get("responseCode", "?")
            codes[code] = codes.get(code, 0) + 1
            labels[label] = labels.get(label, 0) + 1
            ok = row.get("success", "").lower() == "true"
            if not ok:
                errors += 1
            if ok and code == "200" and label == "callback new":
                new_ok += 1
                new_ok_ends.append(ts + el)
    if not starts:
        return {"requests": 0, "errors": 0, "codes": {}, "per_second": [], "note": "no samples in the JTL"}
    t0 = min(starts)
    span = (max(ends) - t0) / 1000
    # Windows start once every thread has started (after the ramp-up) and run while load was being generated: up to
    # the last sample's start, or for the nominal duration when samples hung longer than that (nothing completing is
    # exactly what a stall looks like), but never past the last response.
    w0 = t0 + int(rampup_s * 1000)
    last_start_s = (max(starts) - w0) / 1000
    nominal_s = min((duration_s or 0) - rampup_s, (max(ends) - w0) / 1000)
    n_windows = max(0, int(max(last_start_s, nominal_s)))
    per_second = [0] * n_windows
    for e in ends:
        i = (e - w0) // 1000
        if 0 <= i < n_windows:
            per_second[i] += 1
    # For the plot: every response and the new callbacks answered 200, per second from the first sample's start.
    series_n = int(math.ceil((max(ends) - t0) / 1000)) + 1
    answered_series, new_ok_series = [0] * series_n, [0] * series_n
    for e in ends:
        answered_series[(e - t0) // 1000] += 1
    for e in new_ok_ends:
        new_ok_series[(e - t0) // 1000] += 1
    elapsed.sort()
    return {
        "requests": len(elapsed),
        "span_s": span,
        "tps": len(elapsed) / span if span > 0 else math.nan,
        "mean_ms": statistics.fmean(elapsed),
        "p50_ms": percentile(elapsed, 50),
        "p99_ms": percentile(elapsed, 99),
        "max_ms": elapsed[-1],
        "errors": errors,
        "codes": codes,
        "sent": {"new": labels.get("callback new", 0), "duplicate": labels.get("callback duplicate", 0),
                 "bad-signature": labels.get("callback bad-signature", 0)},
        "new_ok": new_ok,
        "t0_ms": t0,
        "answered_series": answered_series,
        "new_ok_series": new_ok_series,
        "per_second": per_second,
        "stall": stall(per_second),
    }


def analyze_wrk(path: Path) -> dict:
    summary, latency, sent, codes, seconds = {}, {}, {}, {}, {}
    errors_text = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        parts = line.split()
        if not parts:
            continue
        if parts[0] in ("PC_SUMMARY", "PC_LATENCY_US", "PC_SENT"):
            target = {"PC_SUMMARY": summary, "PC_LATENCY_US": latency, "PC_SENT": sent}[parts[0]]
            for kv in parts[1:]:
                k, _, v = kv.partition("=")
                target[k] = float(v)
        elif parts[0] == "PC_CODE" and len(parts) == 3:
            codes[parts[1]] = codes.get(parts[1], 0) + int(parts[2])
        elif parts[0] == "PC_SECOND" and len(parts) == 3:
            seconds[int(parts[1])] = int(parts[2])
        elif "error" in line.lower() or "unable" in line.lower():
            errors_text.append(line.strip())
    if not summary:
        return {"requests": 0, "errors": 0, "codes": codes, "per_second": [],
                "note": "no PC_SUMMARY line in wrk output" + (": " + "; ".join(errors_text[:3]) if errors_text else "")}
    duration = summary["duration_us"] / 1e6
    requests = int(summary["requests"])
    nan_if_none = (lambda v: v) if requests else (lambda v: math.nan)
    non_200 = sum(n for c, n in codes.items() if c != "200")
    conn_errors = int(summary["connect"] + summary["read"] + summary["write"] + summary["timeout"])
    n_windows = int(duration)
    per_second = [seconds.get(i, 0) for i in range(n_windows)]
    return {
        "requests": requests,
        "span_s": duration,
        "tps": requests / duration if duration > 0 else math.nan,
        "mean_ms": nan_if_none(latency.get("mean", math.nan) / 1000),
        "p50_ms": nan_if_none(latency.get("p50", math.nan) / 1000),
        "p99_ms": nan_if_none(latency.get("p99", math.nan) / 1000),
        "max_ms": nan_if_none(latency.get("max", math.nan) / 1000),
        "errors": non_200 + conn_errors,
        "error_detail": {k: int(summary[k]) for k in ("connect", "read", "write", "timeout")} | {"non-200": non_200},
        "codes": codes,
        "sent": {k: int(v) for k, v in sent.items()},
        "unanswered": max(0, int(sum(sent.values())) - sum(codes.values())),
        "per_second": per_second,
        "stall": stall(per_second),
    }


def analyze_threads(path: Path) -> dict:
    """Thread-pool samples in an app log, from the measured load's start when a warm-up came before it."""
    peak, peak_pending, samples = None, None, 0
    if path.exists():
        text = path.read_text(encoding="utf-8", errors="replace")
        mark = text.find(MEASURED_MARK)
        if mark >= 0:
            text = text[mark + len(MEASURED_MARK):]
        for m in THREADS_RE.finditer(text):
            samples += 1
            t, p = int(m.group(1)), int(m.group(2))
            peak = t if peak is None else max(peak, t)
            peak_pending = p if peak_pending is None else max(peak_pending, p)
    return {"peak_threads": peak, "peak_pending": peak_pending, "samples": samples}


def read_meta(path: Path) -> dict:
    meta = {}
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            k, sep, v = line.partition("=")
            if sep:
                meta[k.strip()] = v.strip()
    return meta


def machine() -> str:
    model = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = "?"
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                mem = f"{int(line.split()[1]) / 1024 / 1024:.1f} GiB"
                break
    except OSError:
        pass
    return f"{os.cpu_count()} CPUs (nproc {len(os.sched_getaffinity(0))}), {model}, {mem} RAM, {platform.system()} {platform.release()}"


def fmt(value, digits=1) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def mode_row(mode_dir: Path) -> tuple[dict, dict, dict]:
    meta = read_meta(mode_dir / "meta.env")
    tool = meta.get("tool", "jmeter")
    if tool == "wrk":
        load = analyze_wrk(mode_dir / "wrk.out") if (mode_dir / "wrk.out").exists() else {"note": "wrk.out missing"}
    else:
        load = analyze_jtl(mode_dir / "load.jtl", float(meta.get("duration_s", 0) or 0),
                           float(meta.get("rampup_s", 0) or 0)) if (mode_dir / "load.jtl").exists() else {"note": "load.jtl missing"}
    threads = analyze_threads(mode_dir / "app.log")
    return meta, load, threads


def goodput(meta: dict, load: dict) -> float:
    """New callbacks answered 200 whose effects all completed, per second of load span."""
    span = load.get("span_s") or 0
    if not span:
        return math.nan
    try:
        lost = int(meta.get("lost", "0") or 0)
    except ValueError:
        lost = 0
    if "new_ok" in load:
        ok = load["new_ok"]
    else:
        try:
            ok = int(meta.get("accepted", "0"))
        except ValueError:
            return math.nan
    return max(0, ok - lost) / span


def read_effects(path: Path) -> list[tuple[int, int, int]]:
    rows = []
    if path.exists():
        for line in path.read_text(encoding="utf-8").splitlines():
            parts = line.split()
            if len(parts) == 3 and all(p.isdigit() for p in parts):
                rows.append((int(parts[0]), int(parts[1]), int(parts[2])))
    return rows


def plot(args) -> int:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    dirs = [Path(d) for d in args.mode_dirs]
    fig, axes = plt.subplots(len(dirs), 1, figsize=(10, 2.8 * len(dirs) + 0.6), sharex=True, squeeze=False)
    for ax, mode_dir in zip(axes[:, 0], dirs):
        meta, load, _ = mode_row(mode_dir)
        title = meta.get("mode", mode_dir.name) + (f" (SIGKILL {meta['killed_at_s']} s in, restarted)" if meta.get("killed_at_s") else "")
        t0 = load.get("t0_ms")
        if load.get("answered_series"):
            xs = list(range(len(load["answered_series"])))
            ax.plot(xs, load["answered_series"], label="responses/s (all codes)", color="tab:gray", linewidth=1)
            ax.plot(xs, load["new_ok_series"], label="new callbacks answered 200/s", color="tab:blue", linewidth=1.5)
        effects = read_effects(mode_dir / "effects.tsv")
        if effects and t0:
            ex = [(b[0] - t0) / 1000 for b in effects[1:]]
            ey = [(b[2] - a[2]) / max(0.001, (b[0] - a[0]) / 1000) for a, b in zip(effects, effects[1:])]
            ax.plot(ex, ey, label="orders with all 4 effects done/s", color="tab:green", linewidth=1.5, linestyle="--")
        if meta.get("killed_at_ms") and t0:
            kill_x = (int(meta["killed_at_ms"]) - t0) / 1000
            ax.axvline(kill_x, color="tab:red", linestyle=":", label="SIGKILL")
            if meta.get("restarted_after_s"):
                ax.axvline(kill_x + float(meta["restarted_after_s"]), color="tab:red", linestyle="-.", label="answering again")
        rate = meta.get("rate", "0")
        offered = "closed loop" if rate in ("0", "") else f"{rate} new callbacks/s offered"
        drain = meta.get("drain_s", "?")
        drain_text = ("never (stuck)" if drain == "stuck" else f"not done after {drain[1:]} s" if drain.startswith(">")
                      else f"{drain} s after the load")
        ax.set_title(f"{title}: {offered}, goodput {fmt(goodput(meta, load), 0)}/s, effects done {drain_text}", fontsize=10)
        ax.set_ylabel("per second")
        ax.grid(True, alpha=0.3)
        ax.legend(loc="upper right", fontsize=8)
    axes[-1, 0].set_xlabel("seconds since the first request")
    fig.suptitle(args.title or "PayCallbackApi under load", fontsize=10, wrap=True)
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)
    print(args.out)
    return 0


def compress(per_second: list[int]) -> str:
    return " ".join(str(n) for n in per_second) if per_second else "(none)"


def cpu_seconds(meta: dict, key: str) -> tuple[float, float] | None:
    """A "user system" pair of seconds compare.sh measured from /proc, or None when the run has none."""
    parts = meta.get(key, "").split()
    return (float(parts[0]), float(parts[1])) if len(parts) == 2 else None


def cpu_cells(meta: dict) -> list[str]:
    app, redis, loadgen = (cpu_seconds(meta, k) for k in ("cpu_app_load", "cpu_redis_load", "cpu_loadgen"))
    app_total, redis_total = cpu_seconds(meta, "cpu_app_total"), cpu_seconds(meta, "cpu_redis_total")
    total = lambda pair: "?" if pair is None else fmt(sum(pair), 1)
    split = lambda pair: "" if pair is None else f" ({fmt(pair[0], 1)} user + {fmt(pair[1], 1)} sys)"
    accepted = int(meta.get("accepted", "0") or 0)
    per_callback = "n/a" if app_total is None or accepted == 0 or meta.get("killed_at_s") else \
        f"{sum(app_total) / accepted * 1e6:.0f} us"
    return [f"{total(app)}{split(app)} / {total(redis)} / {total(loadgen)}",
            f"{total(app_total)} / {total(redis_total)}",
            per_callback]


def report(args) -> int:
    rows, details = [], []
    header = ("| mode | offered new/s | TPS | goodput/s | 503 share | mean ms | p50 ms | p99 ms | stall s "
              "| peak pool threads | effects done after s | lost | repeats "
              "| CPU s in the load: app / Redis / load tool | CPU s until done: app / Redis | app CPU per accepted callback |")
    rows.append(header)
    rows.append("|" + " --- |" * 16)
    for d in args.mode_dirs:
        mode_dir = Path(d)
        meta, load, threads = mode_row(mode_dir)
        st = load.get("stall") or {}
        stall_text = "n/a" if st.get("seconds") is None else (
            f"{st['seconds']}" + (f" (from t={st['start']} s)" if st["seconds"] else ""))
        drain = meta.get("drain_s", "n/a")
        cap = meta.get("drain_cap_s", "")
        if drain.startswith(">"):
            drain = f"> {cap or drain[1:]} (not done)"
        elif drain == "stuck":
            drain = f"never (stuck {meta.get('stuck_after_s', '?')} s)"
        g = goodput(meta, load)
        requests = load.get("requests") or 0
        share_503 = (load.get("codes") or {}).get("503", 0) / requests * 100 if requests else math.nan
        rate = meta.get("rate", "0")
        kill = f" (SIGKILL at {meta['killed_at_s']} s, restarted)" if meta.get("killed_at_s") else ""
        rows.append("| " + " | ".join([
            meta.get("mode", mode_dir.name) + kill,
            "closed loop" if rate in ("0", "") else rate,
            fmt(load.get("tps"), 0),
            fmt(g, 0),
            fmt(share_503, 1) + " %",
            fmt(load.get("mean_ms"), 1),
            fmt(load.get("p50_ms"), 1),
            fmt(load.get("p99_ms"), 1),
            stall_text,
            fmt(threads.get("peak_threads")),
            drain,
            meta.get("lost", "?"),
            meta.get("repeats", "?"),
            *cpu_cells(meta),
        ]) + " |")
        lines = [f"### {meta.get('mode', mode_dir.name)} ({meta.get('tool', '?')})", ""]
        if load.get("note"):
            lines.append(f"- **problem:** {load['note']}")
        lines.append(f"- response codes: {json.dumps(load.get('codes', {}), sort_keys=True)}"
                     + (f"; error detail: {json.dumps(load['error_detail'])}" if load.get("error_detail") else ""))
        sent = load.get("sent") or {}
        lines.append(f"- callbacks sent: {sent.get('new', '?')} new, {sent.get('duplicate', '?')} duplicates"
                     + (f", {sent['bad-signature']} with a bad signature" if "bad-signature" in sent else "")
                     + (f"; new ones answered 200: {load['new_ok']}" if "new_ok" in load else "")
                     + f"; Redis pay:stats:accepted = {meta.get('accepted', '?')}")
        lines.append(f"- requests {fmt(load.get('requests'))}, errors {fmt(load.get('errors'))} (non-200 responses other than the "
                     f"expected 401s, connection errors, timeouts), of which 503: {fmt((load.get('codes') or {}).get('503', 0))}; "
                     f"Redis: accepted {meta.get('accepted', '?')}, completed {meta.get('completed', '?')}, accepted orders scanned "
                     f"{meta.get('verified_accepted', '?')} of which incomplete {meta.get('lost', '?')} {meta.get('lost_sample', '')}".rstrip())
        if meta.get("killed_at_s"):
            lines.append(f"- SIGKILL {meta['killed_at_s']} s after the first accepted callback (Redis then: accepted {meta.get('killed_accepted', '?')}, "
                         f"completed {meta.get('killed_completed', '?')}); the app answered again {meta.get('restarted_after_s', '?')} s "
                         f"after the kill; provider calls repeated: {meta.get('repeats', '?')}")
        if "unanswered" in load:
            lines.append(f"- requests still unanswered when wrk stopped (not counted as errors): {load['unanswered']}")
        lines.append(f"- load span {fmt(load.get('span_s'), 1)} s, max latency {fmt(load.get('max_ms'), 0)} ms; "
                     f"median per-second count {fmt((load.get('stall') or {}).get('median'))}")
        lines.append(f"- completed samples per second: {compress(load.get('per_second', []))}")
        lines.append(f"- thread pool: peak {fmt(threads.get('peak_threads'))} threads, peak pending "
                     f"{fmt(threads.get('peak_pending'))} work items ({threads.get('samples', 0)} samples)")
        if int(meta.get("warmup_s", "0") or 0):
            w_drain = meta.get("warmup_drain_s", "?")
            lines.append(f"- warm-up: {meta['warmup_s']} s of the same load before the measured one (files in `warmup/`; "
                         f"tool exit {meta.get('warmup_rc', '?')}): Redis accepted {meta.get('warmup_accepted', '?')}, "
                         f"completed {meta.get('warmup_completed', '?')}, repeats {meta.get('warmup_repeats', '?')}, effects "
                         f"done {w_drain if w_drain in ('stuck', 'n/a') or w_drain.startswith('>') else w_drain + ' s'} after it. "
                         "Every figure above is the measured load's (Redis counters minus their values at its start, CPU "
                         "from its start) except 'lost' and the orders scanned, which cover the warm-up's orders too")
        lines.append(f"- app ready {meta.get('app_ready_s', '?')} s after start; load ran "
                     f"{meta.get('load_s', '?')} s (tool exit {meta.get('load_rc', '?')}); app held no client "
                     f"connection {meta.get('server_idle_s', '?')} s after the load; app stopped "
                     f"{meta.get('app_stop_s', '?')} s after SIGINT; "
                     f"load average before: {meta.get('loadavg_before', '?')}, after: {meta.get('loadavg_after', '?')}")
        lines.append(f"- raw files: `{mode_dir}`")
        details.append("\n".join(lines))

    title = args.title or "PayCallbackApi load comparison"
    out = [f"## {title}", "", *rows, "",
           "offered new/s = valid first-time callbacks offered per second (JMeter's Precise Throughput Timer; duplicates and "
           "bad signatures on top) or closed loop (each client sends its next callback when answered); TPS = all samples / "
           "load span; goodput = new callbacks answered 200 whose four effects all completed, per second of load span; "
           "503 share = samples answered 503 (work not accepted: queue full, store unavailable, or a claim pending) over "
           "all samples; latency over all samples; stall = longest run of consecutive 1-s windows with fewer than half "
           "the median per-second completions (if that median is 0: the longest run of empty windows; t = seconds after "
           "the ramp-up); peak pool threads = max CLR ThreadPool.ThreadCount logged by the app; effects done after = "
           "seconds from the end of the load until pay:stats:completed >= pay:stats:accepted (polled every 0.5 s; "
           "'never (stuck N s)' = no progress for N s with the app idle: those callbacks' failed effects are never "
           "retried); lost = accepted callbacks whose effects were incomplete at the end (a scan of every order); "
           "repeats = legacy provider calls made again because their effect was not recorded (at least once); CPU s = "
           "user + system CPU seconds from /proc: in the load = from its start to its end (the load tool: its whole run), "
           "until done = from the load's start until the effects were done; app CPU per accepted callback = the app's CPU "
           "until done / Redis pay:stats:accepted (not given after a kill: the app's figures are the new process's). "
           "Bare = Queue mode's request path with no post-payment work (a baseline: nothing to wait for or verify).", ""]
    if args.settings:
        out += [f"Settings: {args.settings}", ""]
    out += [f"Machine: {machine()}. Date: {args.date or ''}.", ""]
    if args.command:
        out += [f"Command: `{args.command}`", ""]
    out += ["<details><summary>Per-mode details</summary>", "", "\n\n".join(details), "", "</details>", ""]
    text = "\n".join(out)
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("report")
    r.add_argument("--out")
    r.add_argument("--command")
    r.add_argument("--date")
    r.add_argument("--title")
    r.add_argument("--settings")
    r.add_argument("mode_dirs", nargs="+")
    pl = sub.add_parser("plot")
    pl.add_argument("--out", required=True)
    pl.add_argument("--title")
    pl.add_argument("mode_dirs", nargs="+")
    for name in ("jtl", "wrk", "threads"):
        p = sub.add_parser(name)
        p.add_argument("file")
        if name == "jtl":
            p.add_argument("--duration", type=float, help="nominal load duration, s")
            p.add_argument("--rampup", type=float, default=0, help="ramp-up, s (excluded from the windows)")
    args = parser.parse_args(argv)
    if args.cmd == "report":
        return report(args)
    if args.cmd == "plot":
        return plot(args)
    if args.cmd == "jtl":
        result = analyze_jtl(Path(args.file), args.duration, args.rampup)
    else:
        result = {"wrk": analyze_wrk, "threads": analyze_threads}[args.cmd](Path(args.file))
    print(json.dumps(result, indent=2, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
