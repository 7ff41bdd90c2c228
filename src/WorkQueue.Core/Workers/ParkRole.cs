namespace WorkQueue.Workers;

/// <summary>What an idle worker does while the channel is empty.</summary>
internal enum ParkRole
{
    /// <summary>Wait on the channel for the next job.</summary>
    Leader,

    /// <summary>Park until the pool hands over the lead or asks the worker to re-check its state.</summary>
    Follower,

    /// <summary>The queue is closed: exit.</summary>
    Exit,
}
