namespace WorkQueue.AspNetCore.Redis;

/// <summary>
/// <see cref="RedisWarmupOptions.DedicatedIoThreads"/> is on, but the connection was made without dedicated threads: a
/// configuration problem that retrying cannot fix, so the warm-up does not retry it.
/// </summary>
internal sealed class DedicatedIoThreadsUnavailableException : InvalidOperationException
{
    public DedicatedIoThreadsUnavailableException(string message)
        : base(message)
    {
    }
}
