using Microsoft.Extensions.Time.Testing;

namespace WorkQueue.Testing;

/// <summary>
/// The test's handle on an application's queues, registered by <c>AddWorkQueueTesting</c>: what was enqueued, each
/// queue's mode, waiting until every queue is idle, and moving the engine's fake clock.
/// </summary>
/// <remarks>
/// Resolve it from the application's services (<c>factory.Services.GetRequiredService&lt;IWorkQueueTestHarness&gt;()</c>).
/// It sees calls made through <see cref="IWorkQueue"/> and <see cref="IInMemoryWorkQueue"/> (the default, keyed and
/// <see cref="IWorkQueueProvider"/> ones alike, in memory and durable). Occurrences of recurring jobs are enqueued by the
/// engine itself: they run, and are not recorded.
/// </remarks>
public interface IWorkQueueTestHarness
{
    /// <summary>Gets the engine's fake clock, or <see langword="null"/> when it runs on its real one.</summary>
    FakeTimeProvider? Clock { get; }

    /// <summary>Gets every job recorded since the start or the last <see cref="Clear"/>, in the order they were enqueued.</summary>
    IReadOnlyList<EnqueuedJob> Enqueued { get; }

    /// <summary>Gets the recorded jobs of one handler type, in the order they were enqueued.</summary>
    /// <typeparam name="THandler">The handler type.</typeparam>
    /// <param name="queueName">Only jobs of this queue (case-insensitive), or <see langword="null"/> for every queue.</param>
    /// <returns>The jobs.</returns>
    IReadOnlyList<EnqueuedJob> EnqueuedFor<THandler>(string? queueName = null);

    /// <summary>Forgets every recorded job (and the idempotency keys that held jobs recorded in Record mode held).</summary>
    void Clear();

    /// <summary>Gets what a queue does with enqueued jobs now.</summary>
    /// <param name="queueName">The queue's name (case-insensitive).</param>
    /// <returns>The mode.</returns>
    WorkQueueTestMode GetMode(string queueName);

    /// <summary>Sets what one queue, or every queue, does with the jobs enqueued from now on.</summary>
    /// <param name="mode">The mode.</param>
    /// <param name="queueName">The queue's name (case-insensitive), or <see langword="null"/> for every queue (forgetting the per-queue modes).</param>
    void SetMode(WorkQueueTestMode mode, string? queueName = null);

    /// <summary>
    /// Runs the jobs held in <see cref="WorkQueueTestMode.Record"/> mode, one after the other in the order they were
    /// enqueued (a scheduled one too, now), each as <see cref="WorkQueueTestMode.Inline"/> runs a job (in this call, in a
    /// scope of its own), until
    /// none is held: jobs they enqueue follow their queue's mode, so those held meanwhile run too. Sidekiq's
    /// <c>drain_all</c>.
    /// </summary>
    /// <param name="queueName">Only this queue's held jobs (case-insensitive), or <see langword="null"/> for every queue's.</param>
    /// <param name="cancellationToken">Given to each job; stops before the next one.</param>
    /// <returns>How many jobs ran.</returns>
    /// <exception cref="Exception">A job's exception: the run stops there, that job recorded as failed and the rest still held.</exception>
    Task<int> RunHeldAsync(string? queueName = null, CancellationToken cancellationToken = default);

    /// <summary>
    /// Waits until every queue is idle: in every in-memory and durable queue, no job is queued, running or waiting to be
    /// retried (in this process or, for a durable queue, in Redis), and no inline job is running. Jobs scheduled for a
    /// later time are not waited for.
    /// </summary>
    /// <remarks>
    /// Idle is seen twice in a row with nothing enqueued in between, and, with durable queues, in figures read from Redis
    /// after the wait began (they are read about once a second), so a job handed from one queue to another between two
    /// looks is not missed. The timeout is on the real clock, never the fake one.
    /// </remarks>
    /// <param name="timeout">How long to wait, or <see langword="null"/> for <see cref="WorkQueueTestingOptions.IdleTimeout"/>.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A task that completes when every queue is idle.</returns>
    /// <exception cref="TimeoutException">A queue was still busy at the timeout; the message names each busy queue with its counts and the jobs it could list (id, handler, state, attempt).</exception>
    Task WaitUntilIdleAsync(TimeSpan? timeout = null, CancellationToken cancellationToken = default);

    /// <summary>
    /// Moves the engine's fake clock on by <paramref name="by"/>, which hands the scheduled jobs and recurring occurrences
    /// that came due to their queues, then waits until every queue is idle (see <see cref="WaitUntilIdleAsync(TimeSpan?, CancellationToken)"/>).
    /// </summary>
    /// <param name="by">How far to move the clock; zero only waits.</param>
    /// <param name="timeout">How long to wait for the jobs, or <see langword="null"/> for <see cref="WorkQueueTestingOptions.IdleTimeout"/>.</param>
    /// <param name="cancellationToken">Cancels the wait.</param>
    /// <returns>A task that completes when the jobs that came due have run.</returns>
    /// <exception cref="InvalidOperationException">No fake clock was given (<see cref="WorkQueueTestingOptions.FakeTime"/>).</exception>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="by"/> is negative.</exception>
    /// <exception cref="TimeoutException">A queue was still busy at the timeout (a job that failed waits for its retry on the fake clock: the message says so).</exception>
    Task AdvanceTimeAsync(TimeSpan by, TimeSpan? timeout = null, CancellationToken cancellationToken = default);
}
