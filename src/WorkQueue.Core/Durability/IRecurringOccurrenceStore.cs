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
    /// by any instance, or the job is paused in the store. A manual trigger is always enqueued and claims nothing.
    /// </summary>
    /// <returns>What became of the offer: enqueued here (with the job's id), enqueued by another instance, or paused.</returns>
    /// <exception cref="JobRejectedException">The store refused it (stopping, full and rejecting, unavailable).</exception>
    ValueTask<RecurringOffer> EnqueueOccurrenceAsync(RecurringOccurrence occurrence, CancellationToken cancellationToken);

    /// <summary>
    /// Pauses the job in the store (every instance's offers are refused until it is resumed, restarts included) or
    /// resumes it.
    /// </summary>
    /// <exception cref="JobRejectedException">The store could not be reached.</exception>
    ValueTask SetPausedAsync(string recurringJobId, bool paused, CancellationToken cancellationToken);

    /// <summary>Gets the time of the latest occurrence of the job that any instance enqueued, or <see langword="null"/> if none.</summary>
    ValueTask<DateTimeOffset?> GetLastOccurrenceAsync(string recurringJobId, CancellationToken cancellationToken);
}

/// <summary>What became of an occurrence offered to a durable store.</summary>
internal enum RecurringOfferOutcome
{
    /// <summary>This instance enqueued it.</summary>
    Enqueued,

    /// <summary>Another instance had enqueued it (or a later one).</summary>
    EnqueuedElsewhere,

    /// <summary>The job is paused in the store, by some instance: nothing was enqueued.</summary>
    Paused,
}

/// <summary>An occurrence's offer: its outcome, and the job's id when this instance enqueued it.</summary>
internal readonly record struct RecurringOffer(RecurringOfferOutcome Outcome, string? JobId = null);
