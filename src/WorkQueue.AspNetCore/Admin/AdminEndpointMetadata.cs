namespace WorkQueue.AspNetCore.Admin;

/// <summary>Marks the endpoints mapped by <c>MapWorkQueueAdmin</c>, so a startup check can find them among all endpoints.</summary>
/// <param name="Prefix">The prefix they were mapped under.</param>
internal sealed record AdminEndpointMetadata(string Prefix);
