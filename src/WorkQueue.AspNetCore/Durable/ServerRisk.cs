namespace WorkQueue.AspNetCore.Durable;

/// <summary>
/// A Redis setting whose value can cost a durable queue its jobs, found by the startup checks: the setting as Redis
/// names it, its value, what it does to the queue, and what to set instead.
/// </summary>
internal readonly record struct ServerRisk(string Setting, string Value, string Consequence, string Remedy);
