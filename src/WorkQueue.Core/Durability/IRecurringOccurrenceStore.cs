namespace WorkQueue.Durability;

/// <summary>
/// A durable store that enqueues a recurring job's occurrences so that each one runs once across every instance: the
/// claim of an occurrence and its enqueue are one atomic step in the store (each instance offers every occurrence;
/// one enqueues it). Implemented by the store of a durable queue whose payload is a <see cref="RecurringOccurrence"/>.
/// </summary>
internal interface IRecurringOccurrenceStore
{
    /// <summary>Whether the store can carry occurrences run by <paramref name="handlerType"/> (a job type of it with <see cref="RecurringOccurrence"/> payloads is registered).</summary>
    bool CarriesOccurrencesOf(Type handlerType);

    /// <summary>
    /// Gets how far the store's clock is ahead of the engine's (negative: behind), as last measured; zero until then.
    /// Durable recurring jobs fire on the engine's clock plus this offset, so every instance fires on the store's clock.
    /// </summary>
    TimeSpan ClockOffset { get; }

    /// <summary>
    /// Enqueues <paramref name="occurrence"/> of a job on <paramref name="schedule"/> unless an occurrence of that job at
    /// or after its time was enqueued already, by any instance, or the job is paused, removed or on another schedule in
    /// the store (see <see cref="SetScheduleAsync"/>). A manual trigger is always enqueued and claims nothing.
    /// </summary>
    /// <param name="occurrence">The occurrence.</param>
    /// <param name="handlerType">The recurring job's handler: the stored job is of its job type.</param>
    /// <param name="schedule">The offering instance's schedule of the job (<see cref="Recurring.RecurringSchedule.Fingerprint"/>).</param>
    /// <param name="cancellationToken">Cancels the wait for the store.</param>
    /// <returns>What became of the offer: enqueued here (with the job's id), enqueued by another instance, or refused (and why).</returns>
    /// <exception cref="JobRejectedException">The store refused it (stopping, full and rejecting, unavailable).</exception>
    ValueTask<RecurringOffer> EnqueueOccurrenceAsync(RecurringOccurrence occurrence, Type handlerType, string schedule, CancellationToken cancellationToken);

    /// <summary>
    /// Records a job's schedule for every instance: registered in code at start (written unless the same schedule is
    /// registered, or a runtime change overrode that very schedule), changed at runtime, or removed at runtime (both
    /// always written). Each write makes a new generation.
    /// </summary>
    /// <returns>The job's schedule in the store, after the call.</returns>
    /// <exception cref="JobRejectedException">The store could not be reached.</exception>
    ValueTask<RecurringScheduleRecord> SetScheduleAsync(string recurringJobId, RecurringScheduleChange change, string schedule, CancellationToken cancellationToken);

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

    /// <summary>The job was removed at runtime, by some instance: nothing was enqueued.</summary>
    Removed,

    /// <summary>The job is on another schedule in the store (changed at runtime or deployed): nothing was enqueued.</summary>
    Superseded,
}

/// <summary>
/// An occurrence's offer: its outcome, the job's id when this instance enqueued it, and for a job removed or on another
/// schedule the store's generation and schedule.
/// </summary>
internal readonly record struct RecurringOffer(RecurringOfferOutcome Outcome, string? JobId = null, long Generation = 0, string? Schedule = null);

/// <summary>The latest change of a recurring job's schedule in the store.</summary>
internal enum RecurringScheduleChange
{
    /// <summary>Registered in code, at an instance's start.</summary>
    Registered,

    /// <summary>Added or changed at runtime (<see cref="IRecurringJobs.AddOrUpdate{THandler}(string, string, Action{RecurringJobOptions}?)"/>).</summary>
    Changed,

    /// <summary>Removed at runtime (<see cref="IRecurringJobs.Remove"/>).</summary>
    Removed,
}

/// <summary>A recurring job's schedule as the store holds it: its generation (one more at each write), latest change and schedule.</summary>
internal readonly record struct RecurringScheduleRecord(long Generation, RecurringScheduleChange Change, string Schedule);
