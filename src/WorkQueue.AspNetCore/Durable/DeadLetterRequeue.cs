namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// What a requeue of a dead letter did (see <see cref="DurableScripts.Requeue"/>): the new job's stream id; or
/// <see cref="QueueFull"/>, the queue had no room under its capacity, nothing was written and the dead letter stays; or
/// neither, there was no such dead letter.
/// </summary>
internal readonly record struct DeadLetterRequeue(string? NewId, bool QueueFull)
{
    /// <summary>Gets whether there was no such dead letter.</summary>
    public bool NotFound => NewId is null && !QueueFull;
}
