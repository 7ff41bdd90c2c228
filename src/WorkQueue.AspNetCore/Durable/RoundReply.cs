using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>The round script's reply (<c>Durable/Scripts/round.lua</c>), read by name rather than by position.</summary>
internal readonly struct RoundReply(RedisResult[] reply)
{
    /// <summary>Gets the answer to each enqueue, in order (see <c>round.lua</c>).</summary>
    public RedisResult[] EnqueueAnswers => (RedisResult[])reply[0]!;

    /// <summary>Gets why Redis refused an enqueue, or <see langword="null"/>.</summary>
    public string? EnqueueError => Error(reply[1]);

    /// <summary>Gets why Redis refused the acknowledgements, or <see langword="null"/>.</summary>
    public string? AckError => Error(reply[2]);

    /// <summary>Gets the ms until the next delayed job is due, or -1 (the fetch's answer).</summary>
    public RedisResult NextDue => reply[3];

    /// <summary>Gets the ms until the ended-job lists next need a trim, or -1.</summary>
    public long TrimAgainMs => (long)reply[4];

    /// <summary>Gets why Redis refused a promotion, or <see langword="null"/>.</summary>
    public string? FetchError => Error(reply[5]);

    /// <summary>Gets the epoch the round's read is under (empty without a fetch).</summary>
    public string Epoch => (string?)reply[6] ?? string.Empty;

    /// <summary>Gets Redis's time when the script ran, in Unix ms.</summary>
    public long RedisTimeMs => (long)reply[7];

    private static string? Error(RedisResult error) => error.IsNull ? null : (string?)error;
}
