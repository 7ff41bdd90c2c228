namespace WorkQueue.Workers;

/// <summary>Why a running job's token was cancelled.</summary>
internal enum JobCancelReason
{
    None,
    Timeout,
    Shutdown,
}
