using Microsoft.Extensions.Logging;

namespace WorkQueue.Internal;

/// <summary>
/// Logging on a path that must not fail (settling a job, the pool's monitor, a durable store's thread): a logger that
/// throws is ignored. The arguments travel as state for a static lambda, so a hot method that may log allocates no
/// closure when it does not.
/// </summary>
internal static class SafeLog
{
    public static void TryLog<TState>(this ILogger logger, Action<ILogger, TState> log, TState state)
    {
        try
        {
            log(logger, state);
        }
        catch (Exception)
        {
            // The logger is what failed; there is nowhere left to report it.
        }
    }
}
