namespace WorkQueue.Benchmarks.Support;

/// <summary>
/// The producers of the durable throughput scenario: several concurrent callers that each keep a window of enqueues in
/// flight, as an ingestion endpoint or a fan-out step would (each enqueue is awaited; none is fire-and-forget).
/// </summary>
public static class ConcurrentProducers
{
    /// <summary>
    /// Runs <paramref name="producers"/> producers on the thread pool, which share <paramref name="jobs"/> jobs: each
    /// starts up to <paramref name="inFlight"/> enqueues, awaits them all, and starts the next window, until its share
    /// is done. Returns once every enqueue has completed; an enqueue that fails fails the call.
    /// </summary>
    /// <param name="jobs">The jobs in all.</param>
    /// <param name="producers">The concurrent producers.</param>
    /// <param name="inFlight">The enqueues each producer has started and not yet seen complete, at most.</param>
    /// <param name="enqueue">Enqueues the job with the given number.</param>
    public static void Run(int jobs, int producers, int inFlight, Func<int, ValueTask> enqueue)
    {
        var running = new Task[producers];
        for (int p = 0; p < producers; p++)
        {
            int producer = p;
            running[p] = Task.Run(async () =>
            {
                var window = new ValueTask[inFlight];
                int next = producer;
                while (next < jobs)
                {
                    int started = 0;
                    for (; started < inFlight && next < jobs; started++, next += producers)
                    {
                        window[started] = enqueue(next);
                    }

                    for (int i = 0; i < started; i++)
                    {
                        await window[i].ConfigureAwait(false);
                    }
                }
            });
        }

        Task.WaitAll(running);
    }
}
