namespace WorkQueue.Benchmarks.HangfireRedis;

/// <summary>
/// The job the agent enqueues (<c>client.Enqueue&lt;BenchJob&gt;(j =&gt; j.Run(orderId))</c>), as WorkQueue.Benchmarks'
/// <c>HangfireJob</c>: an instance method with an id as argument, the way Hangfire's docs enqueue a service method.
/// </summary>
/// <param name="run">What the job does with the order id.</param>
public sealed class BenchJob(Action<int> run)
{
    /// <summary>Runs the job.</summary>
    /// <param name="orderId">The order id.</param>
    public void Run(int orderId) => run(orderId);
}
