namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// The job class the Hangfire rows enqueue (<c>client.Enqueue&lt;HangfireJob&gt;(j =&gt; j.Run(orderId))</c>), the
/// way Hangfire's docs enqueue a service method. Hangfire stores the call (type, method, serialized arguments) and a
/// worker activates the type through <see cref="HangfireJobActivator"/>, which hands out this one instance.
/// </summary>
/// <param name="run">What the job does with the order id.</param>
public sealed class HangfireJob(Action<int> run)
{
    /// <summary>Runs the job.</summary>
    /// <param name="orderId">The order id (Hangfire's docs recommend small, serializable arguments such as an id).</param>
    public void Run(int orderId) => run(orderId);
}
