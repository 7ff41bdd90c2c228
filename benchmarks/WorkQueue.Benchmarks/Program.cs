using BenchmarkDotNet.Running;
using WorkQueue.Benchmarks;
using WorkQueue.Benchmarks.Support;

// Every BenchmarkDotNet switch works (--filter, --job, --list flat, ...). Ours: --quick shortens the fixed windows of the
// idle-cost and blocking-jobs scenarios for a dry run. Without --job, the suite runs as --job short.
BenchmarkSwitcher.FromAssembly(typeof(EnqueueBenchmarks).Assembly).Run(BenchmarkSettings.PrepareHost(args));
