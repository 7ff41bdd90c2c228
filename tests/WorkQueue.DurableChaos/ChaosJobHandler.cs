using StackExchange.Redis;

namespace WorkQueue.DurableChaos;

/// <summary>
/// Works for 0-5 ms (blocking or awaiting, at random), then records the completion with one atomic <c>HINCRBY</c> on the
/// process's shared connection and returns: a job counts as completed once Redis has that increment. A kill after the
/// increment and before the library acknowledges the entry makes a duplicate, never a loss. A failed increment (Redis
/// restarting) throws, and the queue retries the job.
/// </summary>
internal sealed class ChaosJobHandler(IConnectionMultiplexer redis, ChaosKeys keys) : IJobHandler<ChaosJob>
{
    public ValueTask ExecuteAsync(ChaosJob payload, CancellationToken cancellationToken)
    {
        int workMs = Random.Shared.Next(0, 6);
        return Random.Shared.Next(2) == 0 ? RunSynchronously(payload, workMs) : RunAsynchronously(payload, workMs, cancellationToken);
    }

    private ValueTask RunSynchronously(ChaosJob payload, int workMs)
    {
        if (workMs > 0)
        {
            // Stands for blocking work on the worker's own thread.
            Thread.Sleep(workMs);
        }

        redis.GetDatabase().HashIncrement(keys.Runs, payload.N);
        return ValueTask.CompletedTask;
    }

    private async ValueTask RunAsynchronously(ChaosJob payload, int workMs, CancellationToken cancellationToken)
    {
        await Task.Delay(workMs, cancellationToken);
        await redis.GetDatabase().HashIncrementAsync(keys.Runs, payload.N);
    }
}
