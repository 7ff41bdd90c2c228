using Hangfire;

namespace WorkQueue.Benchmarks.HangfireRedis;

/// <summary>Resolves <see cref="BenchJob"/> to one instance, as a DI container's activator would resolve a singleton.</summary>
/// <param name="job">The instance every <see cref="BenchJob"/> call runs on.</param>
public sealed class BenchJobActivator(BenchJob job) : JobActivator
{
    /// <inheritdoc/>
    public override object ActivateJob(Type jobType) => jobType == typeof(BenchJob) ? job : base.ActivateJob(jobType);
}
