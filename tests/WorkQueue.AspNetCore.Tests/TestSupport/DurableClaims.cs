namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>
/// The claim settings the durable tests share, by what a test needs of them: a dead instance's jobs reclaimed within
/// about a second, a live consumer that keeps its claims on a loaded CI machine, or no reclaim at all while a test runs.
/// </summary>
internal static class DurableClaims
{
    /// <summary>A dead instance's jobs are reclaimed about a second after its last heartbeat.</summary>
    public static readonly Action<DurableQueueOptions> Fast = d =>
    {
        d.ClaimTimeout = TimeSpan.FromSeconds(1);
        d.HeartbeatInterval = TimeSpan.FromMilliseconds(300);
    };

    /// <summary>
    /// Reclaimed within a few seconds, with room for a live consumer to keep its claims: a loaded 2-core CI machine can
    /// stall a thread for a second.
    /// </summary>
    public static readonly Action<DurableQueueOptions> Live = d =>
    {
        d.ClaimTimeout = TimeSpan.FromSeconds(2);
        d.HeartbeatInterval = TimeSpan.FromMilliseconds(300);
    };

    /// <summary>A claim no run of a test outlives: nothing is reclaimed while the test runs.</summary>
    public static readonly Action<DurableQueueOptions> Never = d => d.ClaimTimeout = TimeSpan.FromMinutes(5);
}
