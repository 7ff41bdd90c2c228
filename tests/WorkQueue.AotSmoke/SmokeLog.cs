using System.Collections.Concurrent;

namespace WorkQueue.AotSmoke;

/// <summary>
/// What the app expects to happen and what did: each check is a signal set once, by a job that ran or by a direct
/// test, so the app can wait for all of them and say which are missing.
/// </summary>
internal sealed class SmokeLog
{
    private readonly ConcurrentDictionary<string, TaskCompletionSource<string?>> _checks = new(StringComparer.Ordinal);

    /// <summary>Registers a check that something must pass before the app ends.</summary>
    public void Expect(string check) => Signal(check);

    /// <summary>Passes <paramref name="check"/>.</summary>
    public void Pass(string check) => Signal(check).TrySetResult(null);

    /// <summary>Fails <paramref name="check"/>, saying why.</summary>
    public void Fail(string check, string why) => Signal(check).TrySetResult(why);

    /// <summary>Passes <paramref name="check"/> when <paramref name="condition"/> holds, else fails it with <paramref name="why"/>.</summary>
    public void Check(string check, bool condition, string why)
    {
        if (condition)
        {
            Pass(check);
        }
        else
        {
            Fail(check, why);
        }
    }

    /// <summary>Waits until every check has an outcome or <paramref name="timeout"/> passes; returns each check's outcome (null: passed).</summary>
    public async Task<IReadOnlyList<(string Check, string? Failure)>> WaitAsync(TimeSpan timeout)
    {
        var all = Task.WhenAll(_checks.Values.Select(c => c.Task));
        await Task.WhenAny(all, Task.Delay(timeout)).ConfigureAwait(false);
        return _checks
            .OrderBy(c => c.Key, StringComparer.Ordinal)
            .Select(c => (c.Key, c.Value.Task.IsCompleted ? c.Value.Task.Result : $"no outcome within {timeout.TotalSeconds:F0} s"))
            .ToList();
    }

    private TaskCompletionSource<string?> Signal(string check) =>
        _checks.GetOrAdd(check, static _ => new TaskCompletionSource<string?>(TaskCreationOptions.RunContinuationsAsynchronously));
}
