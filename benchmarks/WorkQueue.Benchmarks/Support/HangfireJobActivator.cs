using Hangfire;

namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// Resolves <see cref="HangfireJob"/> to one instance, as a DI container's activator (Hangfire.AspNetCore's) would
/// resolve a registered singleton; every other type falls back to Hangfire's default activation.
/// </summary>
/// <param name="job">The instance every <see cref="HangfireJob"/> call runs on.</param>
public sealed class HangfireJobActivator(HangfireJob job) : JobActivator
{
    /// <inheritdoc/>
    public override object ActivateJob(Type jobType) => jobType == typeof(HangfireJob) ? job : base.ActivateJob(jobType);
}
