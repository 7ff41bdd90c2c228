using System.Diagnostics;

namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// Decides whether a nudge this consumer published itself (a round that added jobs publishes one for every consumer,
/// this one included) must make it fetch again. It need not when the round that published it also fetched and its read
/// was not full: that read came after the adds in the same <c>MULTI</c>/<c>EXEC</c> and took every undelivered entry,
/// the new ones included, and the round answered the next due time after its adds. Any other outcome (no fetch: the
/// prefetch full, paused, a dead consumer's jobs waiting; a full read; an error; a reply never read) needs it.
/// </summary>
/// <remarks>
/// The nudge arrives on the subscriber's connection, before or after the store's thread reads the round's reply, so
/// each nudge names its round and each round's outcome is kept (the last <see cref="Window"/> rounds that enqueued): a
/// nudge whose outcome is known is acted on or skipped at once; one that arrives first waits for its round's outcome
/// (<see cref="Resolve"/> then fires it when it is needed); one older than the window counts, as every nudge did before.
/// Only the store's thread calls <see cref="NextRound"/> and <see cref="Resolve"/>, one round at a time and in order.
/// </remarks>
internal sealed class OwnNudgeFilter
{
    /// <summary>How many enqueuing rounds' outcomes are kept for nudges that arrive late.</summary>
    internal const int Window = 64;

    private readonly Lock _lock = new();
    private readonly (long Round, State State)[] _rounds = new (long, State)[Window];
    private long _sent;
    private long _resolved;

    private enum State : byte
    {
        /// <summary>The nudge came before the round's outcome and waits for it.</summary>
        NudgeWaiting = 1,

        /// <summary>The round read everything after its adds: its nudge is redundant here.</summary>
        Covered,

        /// <summary>The round did not fetch, read a full batch, or failed: its nudge is needed here.</summary>
        Needed,
    }

    /// <summary>Gets the number of the next round that enqueues (from 1). Store thread only.</summary>
    public long NextRound()
    {
        lock (_lock)
        {
            Debug.Assert(_sent == _resolved, "A round is sent only once the one before was resolved.");
            return ++_sent;
        }
    }

    /// <summary>Takes this consumer's own nudge of <paramref name="round"/>; returns whether it must fetch now.</summary>
    public bool OnNudge(long round)
    {
        lock (_lock)
        {
            ref var slot = ref _rounds[round % Window];
            if (slot.Round == round && slot.State != State.NudgeWaiting)
            {
                return slot.State == State.Needed;
            }

            if (round > _resolved && round <= _sent)
            {
                slot = (round, State.NudgeWaiting);
                return false;
            }

            // Older than the window, or a number this store never sent (another start of this consumer name): counts.
            return true;
        }
    }

    /// <summary>
    /// Records the outcome of <paramref name="round"/>, the one last given by <see cref="NextRound"/>; returns whether
    /// its nudge came already and must now make this consumer fetch. Store thread only.
    /// </summary>
    public bool Resolve(long round, bool covered)
    {
        lock (_lock)
        {
            Debug.Assert(round == _sent && round == _resolved + 1, "Rounds are resolved once each, in order.");
            ref var slot = ref _rounds[round % Window];
            bool waiting = slot.Round == round && slot.State == State.NudgeWaiting;
            slot = (round, covered ? State.Covered : State.Needed);
            _resolved = round;
            return waiting && !covered;
        }
    }
}
