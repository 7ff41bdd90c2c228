namespace WorkQueue.Durability;

/// <summary>
/// The target of a durable job that can be cancelled from outside this process (another instance, an admin call): the
/// queue attaches each attempt's token source to it, and reads at the end whether a cancel was asked for.
/// </summary>
/// <remarks>
/// A durable job's id is the store's, not the queue's, so it is not a <c>TrackedJob</c>; this is the narrow part of one
/// that running it needs.
/// </remarks>
internal interface IRemoteCancellable
{
    /// <summary>Gets a value indicating whether a cancel was asked for while the job was held here.</summary>
    bool CancelRequested { get; }

    /// <summary>Gets a value indicating whether the cancel came before the job started here: it must not run, and counts as cancelled.</summary>
    bool CanceledBeforeStart { get; }

    /// <summary>Gives the running attempt's token source (used by this attempt only), so a cancel can reach it.</summary>
    void AttachCancellation(CancellationTokenSource source);
}
