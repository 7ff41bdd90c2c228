using Microsoft.Extensions.DependencyInjection;

namespace WorkQueue;

/// <summary>
/// Adds named queues after <c>AddWorkQueue</c>.
/// </summary>
public interface IWorkQueueBuilder
{
    /// <summary>Gets the service collection the queues are registered in.</summary>
    IServiceCollection Services { get; }

    /// <summary>
    /// Adds (or configures further) a named queue with its own capacity and worker pool: a bulkhead, so that slow jobs
    /// on one queue cannot starve jobs on another.
    /// </summary>
    /// <param name="name">The queue's name (case-insensitive).</param>
    /// <param name="configure">Configures the queue's options.</param>
    /// <returns>This builder.</returns>
    /// <exception cref="ArgumentException"><paramref name="name"/> is empty or white space.</exception>
    IWorkQueueBuilder AddQueue(string name, Action<WorkQueueOptions>? configure = null);
}
