namespace WorkQueue.Durability;

/// <summary>
/// A durable store that enqueues a recurring job's occurrences so that each one runs once across every instance: the
/// claim of an occurrence and its enqueue are one atomic step in the store (each instance offers every occurrence;
/// one enqueues it). Implemented by the store of a durable queue whose payload is a <see cref="RecurringOccurrence"/>.
/// </summary>
internal interface IRecurringOccurrenceStore
{
    /// <summary>Gets the type of the queue's handler when its payload is <see cref="RecurringOccurrence"/> (it must be the recurring job's), else <see langword="null"/>.</summary>
    Type? HandlerType { get; }

    /// <summary>
    /// Enqueues <paramref name="occurrence"/> unless an occurrence of that job at or after its time was enqueued already,
    /// by any instance. A manual trigger is always enqueued and claims nothing.
    /// </summary>
    /// <returns>The job's id, or <see langword="null"/> when another instance had enqueued it.</returns>
    /// <exception cref="JobRejectedException">The store refused it (stopping, full and rejecting, unavailable).</exception>
    ValueTask<string?> EnqueueOccurrenceAsync(RecurringOccurrence occurrence, CancellationToken cancellationToken);

    /// <summary>Gets the time of the latest occurrence of the job that any instance enqueued, or <see langword="null"/> if none.</summary>
    ValueTask<DateTimeOffset?> GetLastOccurrenceAsync(string recurringJobId, CancellationToken cancellationToken);
}
