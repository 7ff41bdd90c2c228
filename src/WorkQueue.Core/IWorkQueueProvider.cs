using System.Diagnostics.CodeAnalysis;

namespace WorkQueue;

/// <summary>
/// Gives access to every registered queue by name.
/// </summary>
/// <remarks>
/// The default queue is also registered as <see cref="IWorkQueue"/>, and each queue as a keyed
/// <see cref="IWorkQueue"/> service under its name (<c>[FromKeyedServices("io")] IWorkQueue io</c>).
/// </remarks>
public interface IWorkQueueProvider
{
    /// <summary>Gets every registered queue.</summary>
    IReadOnlyCollection<IWorkQueue> Queues { get; }

    /// <summary>
    /// Gets the queue with the given name.
    /// </summary>
    /// <param name="name">The queue's name (case-insensitive).</param>
    /// <returns>The queue.</returns>
    /// <exception cref="ArgumentException">No queue has that name.</exception>
    IWorkQueue GetQueue(string name);

    /// <summary>
    /// Gets the queue with the given name, if one is registered.
    /// </summary>
    /// <param name="name">The queue's name (case-insensitive).</param>
    /// <param name="queue">The queue, when found.</param>
    /// <returns><see langword="true"/> when a queue has that name.</returns>
    bool TryGetQueue(string name, [NotNullWhen(true)] out IWorkQueue? queue);
}
