using System.Diagnostics;

namespace WorkQueue.Durability;

/// <summary>
/// The target of a durable job, as its span sees it: the job's id in the store (not the local ledger's number), and the
/// trace context of the activity that enqueued it, stored with the job, possibly by another process, so that the job's
/// span on whichever instance runs it has that activity as its parent.
/// </summary>
internal interface IStoredJob
{
    /// <summary>Gets the job's id in the store.</summary>
    string JobId { get; }

    /// <summary>Gets the enqueuing activity's context (a remote one), or <see langword="default"/> when none was stored.</summary>
    ActivityContext TraceParent { get; }
}
