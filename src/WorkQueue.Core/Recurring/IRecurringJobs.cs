using System.Diagnostics.CodeAnalysis;

namespace WorkQueue;

/// <summary>
/// Lists and changes the recurring jobs at runtime: pause, resume, trigger now, remove, add or replace. Registered by
/// <c>AddRecurringJob</c>. On an in-memory queue the jobs run per process (every instance of an app runs its own) on the
/// process's clock; on a durable queue each occurrence is enqueued once across the instances, on Redis's clock, and a
/// pause, a removal and a schedule are shared through Redis.
/// </summary>
public interface IRecurringJobs
{
    /// <summary>
    /// Gets every recurring job, ordered by id.
    /// </summary>
    /// <returns>The jobs.</returns>
    IReadOnlyList<RecurringJobInfo> GetAll();

    /// <summary>
    /// Gets one recurring job.
    /// </summary>
    /// <param name="id">The job's id (case-insensitive).</param>
    /// <returns>The job, or <see langword="null"/> if there is none with that id.</returns>
    RecurringJobInfo? Find(string id);

    /// <summary>
    /// Stops enqueuing the job's occurrences until <see cref="Resume"/>; an occurrence already enqueued still runs.
    /// On a durable queue the pause is also stored in Redis (written in the background), so every instance's occurrences
    /// are refused until a resume on any instance, restarts included; the other instances show the job paused from their
    /// next offer. On an in-memory queue it holds in this process.
    /// </summary>
    /// <param name="id">The job's id.</param>
    /// <returns><see langword="true"/> if the job exists.</returns>
    bool Pause(string id);

    /// <summary>
    /// Resumes a paused job from its next occurrence after now (occurrences missed while paused do not run).
    /// On a durable queue it also lifts the pause stored in Redis, whichever instance paused it.
    /// </summary>
    /// <param name="id">The job's id.</param>
    /// <returns><see langword="true"/> if the job exists.</returns>
    bool Resume(string id);

    /// <summary>
    /// Enqueues one occurrence now, outside the schedule (paused or not); the schedule is unchanged.
    /// </summary>
    /// <param name="id">The job's id.</param>
    /// <param name="cancellationToken">Cancels the wait (a durable queue's enqueue waits for Redis).</param>
    /// <returns>The id of the enqueued job, or <see langword="null"/> if there is no such recurring job.</returns>
    /// <exception cref="JobRejectedException">The job's queue is stopping, full and rejecting, or its store is unavailable.</exception>
    ValueTask<string?> TriggerNowAsync(string id, CancellationToken cancellationToken = default);

    /// <summary>
    /// Removes the job: no further occurrences; one already enqueued still runs. On a durable queue the removal is also
    /// stored in Redis (written in the background): every other instance drops the job at its next offer or start, and
    /// an instance that starts with the same schedule in code keeps it removed, until the job is added again at runtime
    /// (<see cref="AddOrUpdate{THandler}(string, string, Action{RecurringJobOptions}?)"/>) or a deploy registers another
    /// schedule for it in code.
    /// </summary>
    /// <param name="id">The job's id.</param>
    /// <returns><see langword="true"/> if the job existed.</returns>
    bool Remove(string id);

    // RS0026: the overloads differ by the schedule's type (a cron string or a TimeSpan interval) before the optional
    // configure callback, so no call can bind to both.
#pragma warning disable RS0026
    /// <summary>
    /// Adds a recurring job on a cron schedule, or replaces the one with the same id. On a durable queue, called after the
    /// host started, the schedule is also stored in Redis as the job's (written in the background): another instance with
    /// another schedule for the job stops running its own (it logs a warning once) and an instance that starts with the
    /// schedule in code this change replaced keeps the change, until a deploy registers another schedule in code. An
    /// instance runs only the schedule it was given (in code, or by this method there).
    /// </summary>
    /// <typeparam name="THandler">The handler, resolved from a new service scope for each occurrence.</typeparam>
    /// <param name="id">The job's id (case-insensitive; not starting with <c>@</c> or <c>~</c>).</param>
    /// <param name="cronExpression">A cron expression of five fields, or six with seconds first.</param>
    /// <param name="configure">Configures the job's options.</param>
    /// <exception cref="ArgumentException"><paramref name="id"/> is empty or starts with <c>@</c> or <c>~</c>, or the cron expression, time zone or queue is not valid; the message names it.</exception>
    void AddOrUpdate<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler>(string id, string cronExpression, Action<RecurringJobOptions>? configure = null)
        where THandler : class, IJobHandler<RecurringOccurrence>;

    /// <summary>
    /// Adds a recurring job that runs every <paramref name="interval"/>, or replaces the one with the same id.
    /// Occurrences fall on multiples of the interval since the Unix epoch (UTC), so they do not drift across restarts.
    /// On a durable queue the schedule is shared as for a cron schedule
    /// (<see cref="AddOrUpdate{THandler}(string, string, Action{RecurringJobOptions}?)"/>).
    /// </summary>
    /// <typeparam name="THandler">The handler, resolved from a new service scope for each occurrence.</typeparam>
    /// <param name="id">The job's id (case-insensitive; not starting with <c>@</c> or <c>~</c>).</param>
    /// <param name="interval">The interval, from one second to 366 days.</param>
    /// <param name="configure">Configures the job's options.</param>
    /// <exception cref="ArgumentException"><paramref name="id"/> is empty or starts with <c>@</c> or <c>~</c>, or the queue is not valid.</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="interval"/> is out of range.</exception>
    void AddOrUpdate<[DynamicallyAccessedMembers(DynamicallyAccessedMemberTypes.PublicConstructors)] THandler>(string id, TimeSpan interval, Action<RecurringJobOptions>? configure = null)
        where THandler : class, IJobHandler<RecurringOccurrence>;
#pragma warning restore RS0026
}
