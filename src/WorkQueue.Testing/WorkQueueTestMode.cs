namespace WorkQueue.Testing;

/// <summary>
/// What a queue does with a job that application code enqueues or schedules while <c>AddWorkQueueTesting</c> is in
/// place. Every mode records the call (see <see cref="IWorkQueueTestHarness.Enqueued"/>).
/// </summary>
public enum WorkQueueTestMode
{
    /// <summary>The job goes to the real queue and runs there as it would in production; the call is recorded too.</summary>
    Run = 0,

    /// <summary>
    /// The job is recorded and held: it never reaches the queue and never runs, so a test asserts what was enqueued
    /// (queue, handler, payload, key, delay) without its effects. Sidekiq's <c>fake!</c> mode.
    /// </summary>
    Record = 1,

    /// <summary>
    /// The job runs in the producer's call, before the call returns, in a service scope of its own as a queue would run
    /// it; its exception is the call's. A delay or time to run at is ignored (it runs now), and nothing is retried.
    /// Sidekiq's <c>inline!</c> mode.
    /// </summary>
    Inline = 2,
}
