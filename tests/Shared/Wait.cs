namespace WorkQueue.Tests.Support;

/// <summary>Waits on signals with generous timeouts; a timeout fails the test instead of hanging it.</summary>
internal static class Wait
{
    public static readonly TimeSpan Generous = TimeSpan.FromSeconds(20);

    public static async Task ForAsync(Task task, string what)
    {
        var finished = await Task.WhenAny(task, Task.Delay(Generous));
        Assert.True(finished == task, $"Timed out after {Generous.TotalSeconds} s waiting for {what}.");
        await task;
    }

    public static async Task<T> ForAsync<T>(Task<T> task, string what)
    {
        await ForAsync((Task)task, what);
        return await task;
    }

    /// <summary>Re-checks a condition that is read asynchronously (a job's status by id) until it holds.</summary>
    public static async Task UntilAsync(Func<Task<bool>> condition, string what)
    {
        var deadline = DateTime.UtcNow + Generous;
        while (!await condition())
        {
            Assert.True(DateTime.UtcNow < deadline, $"Timed out after {Generous.TotalSeconds} s waiting until {what}.");
            await Task.Delay(10);
        }
    }

    /// <summary>Re-checks a condition that no event announces (such as a worker thread retiring) until it holds.</summary>
    public static async Task UntilAsync(Func<bool> condition, string what)
    {
        var deadline = DateTime.UtcNow + Generous;
        while (!condition())
        {
            Assert.True(DateTime.UtcNow < deadline, $"Timed out after {Generous.TotalSeconds} s waiting until {what}.");
            await Task.Delay(10);
        }
    }
}
