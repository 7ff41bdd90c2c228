using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace WorkQueue.AspNetCore.Redis;

/// <summary>
/// Readiness: unhealthy until the Redis warm-up has completed; once warm, reports which threads serve the connections
/// (data key <c>ioThreads</c>: <c>dedicated</c>, <c>threadPool</c>, <c>mixed</c> or <c>unverified</c>).
/// </summary>
internal sealed class RedisWarmupHealthCheck : IHealthCheck
{
    public const string IoThreadsKey = "ioThreads";

    private readonly RedisConnection _connection;

    public RedisWarmupHealthCheck(RedisConnection connection)
    {
        _connection = connection;
    }

    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        if (!_connection.IsWarm)
        {
            return Task.FromResult(new HealthCheckResult(
                context.Registration.FailureStatus,
                $"Redis at {_connection.Endpoints} is not warmed up yet{(_connection.LastError is { } error ? $": {error}" : ".")}"));
        }

        string ioThreads = _connection.IoThreads switch
        {
            RedisIoThreads.Dedicated => "dedicated",
            RedisIoThreads.ThreadPool => "threadPool",
            RedisIoThreads.Mixed => "mixed",
            _ => "unverified",
        };
        return Task.FromResult(HealthCheckResult.Healthy(
            $"Redis at {_connection.Endpoints} is warm (I/O threads: {ioThreads}).",
            new Dictionary<string, object> { [IoThreadsKey] = ioThreads }));
    }
}
