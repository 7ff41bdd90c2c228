using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Engines;
using BenchmarkDotNet.Jobs;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// Makes every job (whatever <c>--job</c> says) run each benchmark of the class exactly once per process: no pilot, no
/// warm-up, no overhead iterations, one iteration of one invocation. For the scenarios that are not micro-benchmarks
/// but fixed windows measured from inside the benchmark (idle CPU time, request latency under load).
/// </summary>
[AttributeUsage(AttributeTargets.Class)]
public sealed class FixedWindowRunAttribute : JobMutatorConfigBaseAttribute
{
    /// <summary>Initializes a new instance of the <see cref="FixedWindowRunAttribute"/> class.</summary>
    public FixedWindowRunAttribute()
        : base(Job.Default
            .WithStrategy(RunStrategy.Monitoring)
            .WithWarmupCount(0)
            .WithIterationCount(1)
            .WithInvocationCount(1)
            .WithUnrollFactor(1))
    {
    }
}
