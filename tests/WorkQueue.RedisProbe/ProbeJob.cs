namespace WorkQueue.RedisProbe;

/// <summary>A synchronous or asynchronous job whose end the probe's main thread can wait for without the thread pool.</summary>
internal sealed class ProbeJob
{
    private readonly Action<CancellationToken>? _sync;
    private readonly Func<CancellationToken, ValueTask>? _async;

    public ProbeJob(Action<CancellationToken> job) => _sync = job;

    public ProbeJob(Func<CancellationToken, ValueTask> job) => _async = job;

    /// <summary>Gets the event set when the job has ended; a kernel wait on it needs no pool thread.</summary>
    public ManualResetEventSlim Ended { get; } = new(false);

    /// <summary>Enqueues the job on <paramref name="queue"/> (the only call into the queue's API).</summary>
    public bool Enqueue(IInMemoryWorkQueue queue) => _sync is not null
        ? queue.TryEnqueue(ct =>
        {
            try
            {
                _sync(ct);
            }
            finally
            {
                Ended.Set();
            }
        })
        : queue.TryEnqueue(async ct =>
        {
            try
            {
                await _async!(ct);
            }
            finally
            {
                Ended.Set();
            }
        });
}
