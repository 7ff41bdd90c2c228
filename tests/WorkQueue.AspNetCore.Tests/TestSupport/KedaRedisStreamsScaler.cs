using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>What KEDA's redis-streams scaler reads at each poll, one figure per mode.</summary>
/// <param name="PendingEntriesCount">The <c>pendingEntriesCount</c> mode (<c>consumerGroup</c> set, no <c>lagCount</c>).</param>
/// <param name="StreamLength">The <c>streamLength</c> mode (no <c>consumerGroup</c>).</param>
/// <param name="Lag">The <c>lagCount</c> mode (<c>consumerGroup</c> and <c>lagCount</c> set; Redis 7 or later).</param>
internal readonly record struct KedaReadings(long PendingEntriesCount, long StreamLength, long Lag);

/// <summary>
/// Sends the Redis commands KEDA's <c>redis-streams</c> scaler sends, with the same arguments, and reads their replies as
/// it does (kedacore/keda, <c>pkg/scalers/redis_streams_scaler.go</c>: <c>createEntriesCountFn</c> and
/// <c>GetMetricsAndActivity</c>, read at commit 8b4f083 of 2026-08-20, which builds with go-redis v9.22.0). KEDA cannot
/// run here, so the tests check what it would read, and docs/keda.md says what it then does.
/// </summary>
internal sealed class KedaRedisStreamsScaler(IDatabase db, string stream, string consumerGroup = "workers")
{
    /// <summary><c>XPENDING {stream} {group}</c> (the summary form), its count; a missing group is Redis's <c>NOGROUP</c> error.</summary>
    public async Task<long> PendingEntriesCountAsync()
    {
        var summary = (RedisResult[])(await db.ExecuteAsync("XPENDING", (RedisKey)stream, consumerGroup))!;
        return (long)summary[0];
    }

    /// <summary><c>XLEN {stream}</c>.</summary>
    public async Task<long> StreamLengthAsync() => (long)await db.ExecuteAsync("XLEN", (RedisKey)stream);

    /// <summary>
    /// <c>INFO</c> (the <c>redis_version</c> line must say 7 or later, else KEDA reports an error), then
    /// <c>XINFO GROUPS {stream}</c>: 0 when Redis answers <c>ERR no such key</c>; the group's <c>lag</c>, where a nil lag
    /// reads -1 (go-redis 9.9 and later, so KEDA 2.18 and later; before, 0); and when the group is not listed,
    /// <c>XLEN {stream}</c>.
    /// </summary>
    public async Task<long> LagAsync()
    {
        string info = (string)(await db.ExecuteAsync("INFO"))!;
        string? version = info.Split('\n').Select(l => l.Split(':')).FirstOrDefault(f => f.Length > 1 && f[0] == "redis_version")?[1];
        if (version is null || !long.TryParse(version.Split('.')[0], out long major) || major < 7)
        {
            throw new InvalidOperationException($"KEDA's lag mode needs Redis 7 or later; INFO says {version ?? "no version"}.");
        }

        RedisResult groups;
        try
        {
            groups = await db.ExecuteAsync("XINFO", "GROUPS", (RedisKey)stream);
        }
        catch (RedisServerException ex) when (ex.Message == "ERR no such key")
        {
            return 0;
        }

        foreach (var group in (RedisResult[])groups!)
        {
            var fields = (RedisResult[])group!;
            string? name = null;
            RedisResult? lag = null;
            for (int i = 0; i + 1 < fields.Length; i += 2)
            {
                switch ((string?)fields[i])
                {
                    case "name":
                        name = (string?)fields[i + 1];
                        break;
                    case "lag":
                        lag = fields[i + 1];
                        break;
                }
            }

            if (name == consumerGroup)
            {
                return lag is null || lag.IsNull ? -1 : (long)lag;
            }
        }

        return await StreamLengthAsync();
    }

    /// <summary>Reads the three modes' figures (three separate polls, as three triggers would make).</summary>
    public async Task<KedaReadings> ReadAsync() => new(await PendingEntriesCountAsync(), await StreamLengthAsync(), await LagAsync());

    /// <summary>
    /// Whether KEDA counts the trigger active, which is what scales a deployment from zero and, once every trigger is
    /// inactive for <c>cooldownPeriod</c>, back to zero: the figure above <c>activationLagCount</c> (default 0), in every
    /// mode despite the name.
    /// </summary>
    public static bool IsActive(long figure, long activationLagCount = 0) => figure > activationLagCount;
}
