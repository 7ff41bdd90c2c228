namespace WorkQueue.Workers;

/// <summary>The settings a pool is built with (from the queue's validated options).</summary>
internal sealed record WorkerPoolSettings(
    string QueueName,
    int MinWorkers,
    int MaxWorkers,
    int? MaxConcurrency,
    TimeSpan IdleTimeout,
    TimeSpan? JobTimeout,
    TimeSpan StuckJobThreshold,
    bool SpinBeforeParking);
