using StackExchange.Redis;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>The round script's reply (<c>Durable/Scripts/round.lua</c>), read by name rather than by position.</summary>
internal readonly struct RoundReply(RedisResult[] reply)
{
    /// <summary>What the round answers for an enqueue it did not store, before why (job ids never start with it).</summary>
    public const char NotStoredPrefix = '?';

    /// <summary>Gets the answer to each enqueue, in order (see <c>round.lua</c>): one per enqueue sent.</summary>
    public RedisResult[] EnqueueAnswers => (RedisResult[])reply[0]!;

    /// <summary>Gets the enqueue part's error (Redis refused a write, a key of another type, a fault), or <see langword="null"/>.</summary>
    public string? EnqueueError => Error(reply[1]);

    /// <summary>Gets whether Redis acknowledged the round's acknowledgements (all but <see cref="InvalidAcks"/>).</summary>
    public bool AcksApplied => (long)reply[2] == 1;

    /// <summary>Gets the positions (from 1; plain acknowledgements first, then the others) of acknowledgements left out as unreadable.</summary>
    public RedisResult[] InvalidAcks => (RedisResult[])reply[3]!;

    /// <summary>Gets the acknowledgement part's error (with <see cref="AcksApplied"/>, a fault after the acknowledgement), or <see langword="null"/>.</summary>
    public string? AckError => Error(reply[4]);

    /// <summary>Gets the ms until the next delayed job is due, or -1 (the fetch's answer).</summary>
    public RedisResult NextDue => reply[5];

    /// <summary>Gets the ms until the ended-job lists next need a trim, or -1.</summary>
    public long TrimAgainMs => (long)reply[6];

    /// <summary>Gets the trim's error, or <see langword="null"/>.</summary>
    public string? TrimError => Error(reply[7]);

    /// <summary>Gets the fetch's error (a promotion Redis refused, a fault), or <see langword="null"/>.</summary>
    public string? FetchError => Error(reply[8]);

    /// <summary>Gets the epoch the round's read is under (empty without a fetch).</summary>
    public string Epoch => (string?)reply[9] ?? string.Empty;

    /// <summary>Gets Redis's time when the script ran, in Unix ms.</summary>
    public long RedisTimeMs => (long)reply[10];

    private static string? Error(RedisResult error) => error.IsNull ? null : (string?)error;
}
