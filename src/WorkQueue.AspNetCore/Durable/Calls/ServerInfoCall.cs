using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable.Calls;

/// <summary>
/// <c>Durable/Scripts/serverInfo.lua</c>: its KEYS and ARGV in the order the script's header gives them, and its reply
/// read, in one place. The startup checks (<see cref="DurableServerChecks"/>) and the script's tests call it alike.
/// </summary>
internal static class ServerInfoCall
{
    /// <summary>Reads the server's version and INFO's sections server, memory and persistence, on the node that holds the queue, without writing anything.</summary>
    /// <param name="db">The database.</param>
    /// <param name="keys">The queue's keys (the stream's only routes the call to its node).</param>
    /// <returns>The reply read; its <see cref="ServerInfoReply.Info"/> is <see langword="null"/> when Redis refused INFO.</returns>
    public static async Task<ServerInfoReply> RunAsync(IDatabase db, RedisStreamKeys keys) =>
        ServerInfoReply.Read(await db.ScriptEvaluateAsync(DurableScripts.ServerInfo, Keys(keys), Arguments()).ConfigureAwait(false));

    /// <summary>KEYS: stream.</summary>
    public static RedisKey[] Keys(RedisStreamKeys keys) => [keys.Stream];

    /// <summary>ARGV: none.</summary>
    public static RedisValue[] Arguments() => [];
}

/// <summary>What <c>serverInfo.lua</c> answers.</summary>
/// <param name="Version">The server's version as the script engine reports it (Redis 7.0 and later), or <see langword="null"/>.</param>
/// <param name="Info">INFO's sections server, memory and persistence, or <see langword="null"/> when Redis refused INFO.</param>
/// <param name="InfoRefusal">Redis's refusal of INFO (an ACL without <c>+info</c>, say), or <see langword="null"/>.</param>
internal readonly record struct ServerInfoReply(string? Version, string? Info, string? InfoRefusal)
{
    /// <summary>Reads the script's reply: <c>{ version or false, the sections' text or false, the refusal or false }</c> (Lua's false arrives as a null reply).</summary>
    public static ServerInfoReply Read(RedisResult reply)
    {
        var parts = (RedisResult[])reply!;
        return new ServerInfoReply(Text(parts[0]), Text(parts[1]), Text(parts[2]));
    }

    private static string? Text(RedisResult part) => part.IsNull ? null : (string?)part;
}
