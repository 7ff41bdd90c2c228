#!/usr/bin/env python3
"""Where the app's CPU goes: a `perf script` dump of the app (see profile.sh) summed by thread and by kind of code.

    breakdown.py perf.script [--per-callback-us N]

Each sample is one tick of CPU (perf's cpu-clock event) on one of the app's threads. Threads say what the time was
for (the CLR thread pool serves the requests, WorkQueue's queues are named threads, StackExchange.Redis has its own
reader and writer threads); the innermost frame says what kind of code ran (the kernel waking or switching threads,
the network stack, the JIT, the runtime, managed code by library). Stacks through the runtime's native code often
stop there (it has no frame pointers), which is why the thread, not the outer frames, names the activity. With
--per-callback-us (the app's CPU per accepted callback that compare.sh measured in the same run) shares are also given
in microseconds per callback.
"""
import argparse
import collections
import re

THREADS = [  # thread name prefix (perf shows the first 15 characters) -> what that thread does in this app
    (".NET TP Worker", "request path (CLR thread pool: Kestrel, the endpoint, async Redis continuations)"),
    ("WorkQueue:legac", "legacy queue's threads (provider calls and their Redis calls)"),
    ("WorkQueue:payme", "payments queue's threads (post-payment job)"),
    ("WorkQueue:defau", "default queue's threads (Queue mode's post-payment job in profiles before it moved to payments)"),
    ("WorkQueue:", "other WorkQueue threads"),
    ("SE.Redis", "Redis client I/O threads"),
    ("StackExchange.R", "Redis client I/O threads"),
    (".NET Sockets", "socket event loop (epoll)"),
    (".NET Tiered Com", "JIT (tiered compilation)"),
    (".NET Server GC", "GC"),
    (".NET BGC", "GC"),
    ("Console logger", "console logging"),
]

KINDS = [  # (regex on the innermost frame or the first kernel frames, kind)
    (r"futex|finish_task_switch|__schedule|try_to_wake_up|sched_yield|pthread_cond|lll_lock|hrtimer|nanosleep", "kernel: thread sleep/wake-up"),
    (r"tcp_|sock|inet_|ip_|sendto|recvfrom|skb|netif|_copy_to_iter|_copy_from_iter", "kernel: network"),
    (r"epoll", "kernel: epoll"),
    (r"libclrjit", "JIT"),
    (r"OpenTelemetry|System\.Diagnostics\.(Activity|Metrics|DiagnosticListener)|Activity", "telemetry"),
    (r"StackExchange\.Redis|RESPite", "Redis client (managed)"),
    (r"WorkQueue\.", "WorkQueue (managed)"),
    (r"PayCallbackApi", "sample (managed)"),
    (r"System\.Text\.Json", "JSON"),
    (r"Cryptography|libcrypto", "HMAC/crypto"),
    (r"Kestrel|Microsoft\.AspNetCore|System\.IO\.Pipelines", "Kestrel/ASP.NET (managed)"),
    (r"libcoreclr", "runtime (native: locks, allocation, type system)"),
    (r"kallsyms", "kernel: other"),
    (r"System\.|Microsoft\.", "BCL (managed, other)"),
]


def read(path):
    sample = None
    for line in open(path, errors="replace"):
        if not line.strip():
            if sample:
                yield sample
            sample = None
        elif not line.startswith((" ", "\t")):
            m = re.match(r"^(.*?)\s+\d+(?:/\d+)?\s", line)
            sample = {"thread": (m.group(1) if m else line.split()[0]).strip(), "frames": []}
        elif sample is not None:
            sample["frames"].append(line.strip())
    if sample:
        yield sample


def thread_of(name):
    return next((label for prefix, label in THREADS if name.startswith(prefix)), f"other ({name})")


def kind_of(frames):
    leaf = frames[0] if frames else ""
    kernel = [f for f in frames[:30] if "kallsyms" in f]
    text = " ".join(kernel) if "kallsyms" in leaf else leaf
    return next((kind for pattern, kind in KINDS if re.search(pattern, text)), "other native")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("--per-callback-us", type=float)
    args = parser.parse_args()
    samples = list(read(args.script))
    total = len(samples)
    by_thread = collections.Counter(thread_of(s["thread"]) for s in samples)
    by_kind = collections.Counter(kind_of(s["frames"]) for s in samples)
    cross = collections.Counter((thread_of(s["thread"]), kind_of(s["frames"])) for s in samples)

    def cell(n):
        share = f"{100 * n / total:.1f} %"
        return f"{share} ({args.per_callback_us * n / total:.0f} us)" if args.per_callback_us else share

    print(f"{total} samples\n")
    print("| thread (what it does) | CPU share | its top kinds of code |")
    print("| --- | --- | --- |")
    for thread, n in by_thread.most_common():
        kinds = sorted(((k, m) for (t, k), m in cross.items() if t == thread), key=lambda x: -x[1])[:3]
        print(f"| {thread} | {cell(n)} | " + "; ".join(f"{k} {100 * m / n:.0f} %" for k, m in kinds) + " |")
    print("\n| kind of code (innermost frame) | CPU share |")
    print("| --- | --- |")
    for kind, n in by_kind.most_common():
        print(f"| {kind} | {cell(n)} |")


if __name__ == "__main__":
    main()
