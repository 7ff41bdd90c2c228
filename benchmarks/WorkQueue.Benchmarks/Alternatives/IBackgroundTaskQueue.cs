namespace WorkQueue.Benchmarks.Alternatives;

/// <summary>
/// The queue of the Microsoft docs' "Queued background tasks" sample
/// (learn.microsoft.com/aspnet/core/fundamentals/host/hosted-services, <c>IBackgroundTaskQueue</c>), as users copy it.
/// </summary>
public interface IBackgroundTaskQueue
{
    /// <summary>Queues a work item, waiting for space when the queue is full.</summary>
    /// <param name="workItem">The work item.</param>
    /// <returns>A task that completes when the item is queued.</returns>
    ValueTask QueueBackgroundWorkItemAsync(Func<CancellationToken, ValueTask> workItem);

    /// <summary>Takes the next work item, waiting for one.</summary>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>The work item.</returns>
    ValueTask<Func<CancellationToken, ValueTask>> DequeueAsync(CancellationToken cancellationToken);
}
