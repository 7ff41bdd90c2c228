using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace WorkQueue.AspNetCore.Redis;

/// <summary>Readiness: unhealthy until the Redis warm-up has completed.</summary>
internal sealed class RedisWarmupHealthCheck : IHealthCheck
{
    private readonly RedisConnection _connection;

    public RedisWarmupHealthCheck(RedisConnection connection)
    {
        _connection = connection;
    }

    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default) =>
        Task.FromResult(_connection.IsWarm
            ? HealthCheckResult.Healthy($"Redis at {_connection.Endpoints} is warm.")
            : new HealthCheckResult(
                context.Registration.FailureStatus,
                $"Redis at {_connection.Endpoints} is not warmed up yet{(_connection.LastError is { } error ? $": {error}" : ".")}"));
}
