namespace WorkQueue.AspNetCore.Redis;

/// <summary>Which threads read and write the multiplexer's connections, as found after the warm-up connected.</summary>
internal enum RedisIoThreads
{
    /// <summary>Not known yet: the warm-up has not completed.</summary>
    Unknown,

    /// <summary>Every endpoint's connection has a reader and a writer thread of its own, off the CLR thread pool.</summary>
    Dedicated,

    /// <summary>Every endpoint's connection is read and written through the CLR thread pool.</summary>
    ThreadPool,

    /// <summary>Some endpoints' connections have their own threads and some use the thread pool.</summary>
    Mixed,

    /// <summary>
    /// The installed StackExchange.Redis cannot report what each connection got (with dedicated threads requested, the
    /// warm-up then accepts it only while the flag is on).
    /// </summary>
    Unverified,
}
