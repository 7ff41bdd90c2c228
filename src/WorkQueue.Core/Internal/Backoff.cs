namespace WorkQueue.Internal;

/// <summary>Exponential backoff with "equal jitter": a delay between half and all of the nominal value.</summary>
internal static class Backoff
{
    public static TimeSpan Compute(RetryOptions options, int failedAttempt, Func<double> nextJitter)
    {
        // failedAttempt is 1 for the first failure: base, 2x base, 4x base, ... capped at MaxDelay.
        double exponent = Math.Min(failedAttempt - 1, 62);
        double nominal = Math.Min(options.BaseDelay.Ticks * Math.Pow(2, exponent), options.MaxDelay.Ticks);
        if (options.UseJitter)
        {
            nominal = (nominal / 2) + (nextJitter() * nominal / 2);
        }

        return TimeSpan.FromTicks((long)nominal);
    }
}
