namespace WorkQueue.Internal;

/// <summary>
/// Tells whether code runs inside a job of a given provider's queues. Each queue thread sets the marker once, when it
/// starts, so it costs nothing per job; every job and continuation inherits it through the execution context, also
/// after an await with <c>ConfigureAwait(false)</c>. A draining queue uses it to keep accepting the work that running
/// jobs hand on, while it refuses work from outside.
/// </summary>
internal static class JobFlow
{
    private static readonly AsyncLocal<object?> s_marker = new();

    public static void EnterThread(object? marker) => s_marker.Value = marker;

    public static bool IsInsideJobOf(object? marker) => marker is not null && ReferenceEquals(s_marker.Value, marker);
}
