using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// The entries <c>adopt.lua</c> and <c>reclaim.lua</c> hand a consumer, read in one place: a list of
/// <c>{ id, fields, deliveries }</c>, the fields as <c>XRANGE</c> returns them.
/// </summary>
internal static class ClaimedEntries
{
    /// <summary>Reads the list of entries.</summary>
    public static List<DurableEntry> Read(RedisResult list) =>
        [.. ((RedisResult[])list!).Select(static raw => (RedisResult[])raw!).Select(static t => DurableEntry.Parse((string)t[0]!, t[1], (long)t[2]))];
}
