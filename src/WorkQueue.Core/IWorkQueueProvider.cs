using System.Diagnostics.CodeAnalysis;

namespace WorkQueue;

/// <summary>
/// Gives access to every registered queue by name, and stops them together.
/// </summary>
/// <remarks>
/// The default queue is also registered as <see cref="IWorkQueue"/> and <see cref="IInMemoryWorkQueue"/>, and each queue
/// as a keyed <see cref="IWorkQueue"/> and <see cref="IInMemoryWorkQueue"/> service under its name, matched
/// case-insensitively (<c>[FromKeyedServices("io")] IWorkQueue io</c>).
/// </remarks>
public interface IWorkQueueProvider
{
    /// <summary>Gets every registered queue's control side.</summary>
    IReadOnlyCollection<IWorkQueueControl> Queues { get; }

    /// <summary>
    /// Gets the producer side of the queue with the given name, in memory or durable.
    /// </summary>
    /// <param name="name">The queue's name (case-insensitive).</param>
    /// <returns>The queue.</returns>
    /// <exception cref="ArgumentException">No queue has that name.</exception>
    IWorkQueue GetQueue(string name);

    /// <summary>
    /// Gets the producer side of the in-memory queue with the given name, which also takes delegates, handler instances
    /// and <c>TryEnqueue</c>.
    /// </summary>
    /// <param name="name">The queue's name (case-insensitive).</param>
    /// <returns>The queue.</returns>
    /// <exception cref="ArgumentException">No queue has that name.</exception>
    /// <exception cref="InvalidOperationException">The queue is durable: it takes typed-handler jobs only, through <see cref="GetQueue(string)"/>.</exception>
    IInMemoryWorkQueue GetInMemoryQueue(string name);

    /// <summary>
    /// Gets the control side of the queue with the given name, if one is registered.
    /// </summary>
    /// <param name="name">The queue's name (case-insensitive).</param>
    /// <param name="queue">The queue's control side, when found.</param>
    /// <returns><see langword="true"/> when a queue has that name.</returns>
    bool TryGetControl(string name, [NotNullWhen(true)] out IWorkQueueControl? queue);

    /// <summary>
    /// Stops every queue together, as the host does when it stops: new jobs from outside any job are refused at once;
    /// jobs enqueued by running jobs (of any queue) are still accepted, so work already accepted flows through queues
    /// that feed each other; the queues stop when no job is queued, running or waiting to retry in any of them, or at
    /// the deadline, when what is left is cancelled and reported. Calling it again returns the same reports.
    /// </summary>
    /// <param name="drainTimeout">How long to let jobs finish, or <see cref="Timeout.InfiniteTimeSpan"/> to rely on the token.</param>
    /// <param name="cancellationToken">Ends the drain early, as the host's shutdown timeout does.</param>
    /// <returns>One report per queue.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="drainTimeout"/> is negative (other than infinite) or longer than about 49.7 days.</exception>
    Task<IReadOnlyList<ShutdownReport>> StopAsync(TimeSpan drainTimeout, CancellationToken cancellationToken = default);
}
