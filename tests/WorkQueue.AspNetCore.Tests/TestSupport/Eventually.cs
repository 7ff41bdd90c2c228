namespace WorkQueue.AspNetCore.Tests.TestSupport;

/// <summary>Waits for a condition on state another process owns (Redis), checking it every few milliseconds, with a generous timeout.</summary>
internal static class Eventually
{
    public static async Task HoldsAsync(Func<Task<bool>> condition, string what, TimeSpan? timeout = null)
    {
        var deadline = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(30));
        while (!await condition())
        {
            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"Timed out waiting for: {what}.");
            }

            await Task.Delay(20);
        }
    }

    /// <summary>Reads a value until <paramref name="condition"/> holds for it, and returns that value.</summary>
    public static async Task<T> ValueAsync<T>(Func<ValueTask<T>> read, Func<T, bool> condition, string what, TimeSpan? timeout = null)
    {
        var deadline = DateTime.UtcNow + (timeout ?? TimeSpan.FromSeconds(30));
        while (true)
        {
            var value = await read();
            if (condition(value))
            {
                return value;
            }

            if (DateTime.UtcNow > deadline)
            {
                Assert.Fail($"Timed out waiting for: {what}. The last value was {value}.");
            }

            await Task.Delay(20);
        }
    }
}
