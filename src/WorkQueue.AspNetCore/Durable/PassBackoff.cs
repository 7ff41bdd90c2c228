namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Whether the store's current pass has failed, and how long its loop waits after a pass that Redis failed
/// (<see cref="RedisStreamStore"/>): every error of a pass is told here, once. A failing Redis gets
/// one pass a full backoff (<c>ErrorBackoff</c>, at most 1 s), however often producers signal; but when every error of
/// the pass is one that a slot on the move gives on Redis Cluster (<see cref="IsSlotMoving"/>), the pass is tried again
/// after <see cref="SlotMoveFirst"/>, doubling while such passes fail in a row, up to <see cref="SlotMoveMax"/> (or the
/// full backoff when that is shorter): the migration of a slot takes tens of ms to seconds, and a queue waited out a
/// whole second after it. While a long one lasts, a pass that fails costs one call Redis refuses at once, a few a second. The scripts fail whole
/// before their first write while the slot moves (see <c>Scripts/includes/here.lua</c>), so trying again soon is safe.
/// A pass that succeeds starts again from <see cref="SlotMoveFirst"/>. Used by the store's thread alone.
/// </summary>
internal sealed class PassBackoff
{
    /// <summary>The first wait after a pass that failed only because the queue's slot was on the move.</summary>
    internal static readonly TimeSpan SlotMoveFirst = TimeSpan.FromMilliseconds(50);

    /// <summary>The longest wait between passes that fail because the slot is on the move: the queue resumes within it once the move ends.</summary>
    internal static readonly TimeSpan SlotMoveMax = TimeSpan.FromMilliseconds(200);

    private TimeSpan _slotMove = SlotMoveFirst;
    private bool _otherError;

    /// <summary>Gets a value indicating whether the pass under way has met an error (the loop then waits <see cref="AfterFailedPass"/>).</summary>
    public bool PassFailed { get; private set; }

    /// <summary>
    /// Whether Redis's refusal is one a slot on the move gives: <c>TRYAGAIN</c> (a command on several keys of a migrating
    /// slot, some of them moved), <c>ASK</c> and <c>MOVED</c> (a redirection the client did not follow), and, from a
    /// script (a whole script's error or a round part's, also as a <c>?</c> answer's why), a key it builds itself that
    /// is not on the node: <c>Script attempted to access a non local key</c>.
    /// </summary>
    public static bool IsSlotMoving(string? message)
    {
        if (message is null)
        {
            return false;
        }

        return message.StartsWith("TRYAGAIN ", StringComparison.Ordinal)
            || message.StartsWith("ASK ", StringComparison.Ordinal)
            || message.StartsWith("MOVED ", StringComparison.Ordinal)
            || message.Contains("Script attempted to access a non local key", StringComparison.Ordinal);
    }

    /// <summary>A pass begins: it has met no error yet.</summary>
    public void PassStarted()
    {
        PassFailed = false;
        _otherError = false;
    }

    /// <summary>The pass met an error (Redis's message; <see langword="null"/> for a failure that is not Redis's refusal).</summary>
    public void Failed(string? message)
    {
        PassFailed = true;
        if (!IsSlotMoving(message))
        {
            _otherError = true;
        }
    }

    /// <summary>A pass succeeded: the next slot move starts from the short wait again.</summary>
    public void Succeeded() => _slotMove = SlotMoveFirst;

    /// <summary>How long to wait after the pass that failed: <paramref name="full"/>, or the slot move's wait (then doubled, up to <see cref="SlotMoveMax"/> or <paramref name="full"/>).</summary>
    public TimeSpan AfterFailedPass(TimeSpan full)
    {
        if (_otherError)
        {
            _slotMove = SlotMoveFirst;
            return full;
        }

        var cap = SlotMoveMax < full ? SlotMoveMax : full;
        var wait = _slotMove < cap ? _slotMove : cap;
        _slotMove = wait + wait < cap ? wait + wait : cap;
        return wait;
    }
}
