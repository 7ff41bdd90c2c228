namespace WorkQueue.Workers;

/// <summary>What a thread that found nothing to do becomes.</summary>
internal enum ParkRole
{
    /// <summary>The one thread that waits on the channel for the next job.</summary>
    Leader,

    /// <summary>Parked until signalled (or its idle timeout passes).</summary>
    Follower,

    /// <summary>Work arrived while it was parking: look again.</summary>
    Retry,
}
