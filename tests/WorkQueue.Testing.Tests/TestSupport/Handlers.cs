using System.Collections.Concurrent;
namespace WorkQueue.Testing.Tests.TestSupport;

/// <summary>What the test handlers ran, in order, with a signal per count.</summary>
internal sealed class JobLog
{
    private readonly ConcurrentQueue<string> _runs = new();

    public IReadOnlyList<string> Runs => [.. _runs];

    /// <summary>Gets a gate that <see cref="BlockingHandler"/> waits on.</summary>
    public TaskCompletionSource Gate { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

    public int Attempts;

    public void Ran(string what) => _runs.Enqueue(what);
}

/// <summary>A scoped service whose disposal the log sees (a job's scope is its own, and ends with it).</summary>
internal sealed class ScopedProbe(JobLog log) : IDisposable
{
    public void Dispose() => log.Ran("scope disposed");
}

internal sealed class LogHandler(JobLog log, ScopedProbe probe) : IJobHandler<string>
{
    public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
    {
        GC.KeepAlive(probe);
        log.Ran(payload);
        return default;
    }
}

/// <summary>Waits a moment, then hands <c>{payload}-next</c> to the <c>second</c> queue: work that crosses queues.</summary>
internal sealed class HandOnHandler(JobLog log, IWorkQueueProvider queues) : IJobHandler<string>
{
    public async ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
    {
        await Task.Delay(50, cancellationToken);
        log.Ran(payload);
        await queues.GetQueue("second").EnqueueAsync<SlowLogHandler, string>(payload + "-next", cancellationToken);
    }
}

internal sealed class SlowLogHandler(JobLog log) : IJobHandler<string>
{
    public async ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
    {
        await Task.Delay(50, cancellationToken);
        log.Ran(payload);
    }
}

internal sealed class BlockingHandler(JobLog log) : IJobHandler<string>
{
    public async ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
    {
        await log.Gate.Task.WaitAsync(cancellationToken);
        log.Ran(payload);
    }
}

/// <summary>Fails its first attempt.</summary>
internal sealed class FlakyHandler(JobLog log) : IJobHandler<string>
{
    public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken)
    {
        if (Interlocked.Increment(ref log.Attempts) == 1)
        {
            throw new InvalidOperationException("first attempt fails");
        }

        log.Ran(payload);
        return default;
    }
}

internal sealed class ThrowingHandler : IJobHandler<string>
{
    public ValueTask ExecuteAsync(string payload, CancellationToken cancellationToken) => throw new InvalidOperationException("boom: " + payload);
}

internal sealed class TickHandler(JobLog log) : IJobHandler<RecurringOccurrence>
{
    public ValueTask ExecuteAsync(RecurringOccurrence payload, CancellationToken cancellationToken)
    {
        log.Ran($"tick {payload.ScheduledFor:HH:mm}");
        return default;
    }
}
