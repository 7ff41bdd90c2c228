using PayCallbackApi.PostPayment;
using PayCallbackApi.Settlement;
using WorkQueue;
using WorkQueue.AspNetCore;

namespace PayCallbackApi;

/// <summary>Where the sample's queues keep their jobs: the one setting between Queue mode and Durable mode.</summary>
public enum QueueStore
{
    /// <summary>In this process's memory (Queue mode): fast, and lost with the process.</summary>
    InMemory,

    /// <summary>In Redis Streams (Durable mode): a job is stored before its enqueue completes and survives a kill.</summary>
    RedisStreams,
}

/// <summary>
/// The sample's queues and their job types, declared once for every mode: the same names, the same engine settings and
/// the same job types whichever <see cref="QueueStore"/> keeps the jobs. The producers (<see cref="QueueDispatcher"/>,
/// <see cref="PostPaymentJob"/>) enqueue through <see cref="IWorkQueue"/> and do not know the store.
/// </summary>
public static class SampleQueues
{
    /// <summary>The post-payment jobs, one per accepted callback.</summary>
    public const string Payments = "payments";

    /// <summary>The bulkhead for the blocking provider calls, one job per order.</summary>
    public const string Legacy = "legacy";

    /// <summary>The nightly settlement summary, a recurring job.</summary>
    public const string Settlement = "settlement";

    /// <summary>
    /// Declares the <c>payments</c>, <c>legacy</c> and <c>settlement</c> queues in <paramref name="store"/>, the job types
    /// they carry, and the settlement summary's schedule. <c>WorkQueue:Queues:{name}</c> in configuration overrides the
    /// engine settings below (and <c>WorkQueue:Queues:{name}:Durable</c> the durable ones).
    /// </summary>
    public static IWorkQueueBuilder AddSampleQueues(this IWorkQueueBuilder workQueue, QueueStore store, string settlementCron, string settlementZone)
    {
        // The only capacity that depends on the store: an in-memory backlog is this process's memory (and what a kill
        // loses), one in Redis is not, so a durable `payments` holds four times as many before it answers 503.
        int paymentsCapacity = store == QueueStore.RedisStreams ? 200_000 : 50_000;
        Add(workQueue, store, Payments, o => ConfigurePayments(o, paymentsCapacity));
        Add(workQueue, store, Legacy, ConfigureLegacy);
        Add(workQueue, store, Settlement, o => o.MaxWorkers = 1);

        // What a stored job names to say which handler runs it (an in-memory queue runs the handler its enqueue named and
        // needs no registration, so they are declared whatever the store). The names are given, not the class names, so
        // that renaming a class does not strand the jobs already in Redis.
        workQueue
            .AddJobType<PostPaymentJob, PaidOrder>("post-payment")
            .AddJobType<LegacyCallJob, PaidOrder>("legacy-calls")
            .AddJobType<SettlementSummaryJob, RecurringOccurrence>("settlement-summary");

        // In memory each instance runs its own nightly summary; in Redis each night runs once across every instance, and a
        // night missed while all were down runs at the next start (MissedOccurrences = RunOnce, the default).
        return workQueue.AddRecurringJob<SettlementSummaryJob>(SettlementSummaryJob.Id, settlementCron, o =>
        {
            o.Queue = Settlement;
            o.TimeZone = settlementZone;
        });
    }

    private static void Add(IWorkQueueBuilder workQueue, QueueStore store, string name, Action<WorkQueueOptions> configure)
    {
        if (store == QueueStore.RedisStreams)
        {
            workQueue.AddDurableQueue(name, configure, ConfigureDurable);
        }
        else
        {
            workQueue.AddQueue(name, configure);
        }
    }

    // The post-payment jobs: few threads (Redis calls only), full means 503 + Retry-After for the gateway, failed attempts
    // retried twice.
    private static void ConfigurePayments(WorkQueueOptions o, int capacity)
    {
        o.MinWorkers = 2;
        o.MaxWorkers = 16;
        o.Capacity = capacity;
        o.FullMode = QueueFullMode.Reject;
        o.Retry.MaxAttempts = 3;
        o.Retry.BaseDelay = TimeSpan.FromMilliseconds(200);

        // Every callback's job is visible in the dashboard's job browser and the admin search, not only keyed ones (a
        // durable queue sees every job by nature).
        o.TrackAllJobs = true;
    }

    // The bulkhead for the blocking provider calls: one job per callback making 2 calls of ProviderLatencyMs (20 ms) at
    // 3,000 callbacks/s keeps about 120 threads blocked, so it may grow to 256 (dedicated threads, never the CLR pool's),
    // starting at 32. It waits for space rather than rejecting: its jobs come from accepted work.
    private static void ConfigureLegacy(WorkQueueOptions o)
    {
        o.MinWorkers = 32;
        o.MaxWorkers = 256;
        o.Capacity = 200_000;
        o.FullMode = QueueFullMode.Wait;
        o.Retry.MaxAttempts = 3;
        o.Retry.BaseDelay = TimeSpan.FromMilliseconds(200);
    }

    // Redis Streams only, a sample's choice for a quick recovery after a kill: another consumer takes a dead one's jobs
    // after 10 s.
    private static void ConfigureDurable(DurableQueueOptions d)
    {
        d.ClaimTimeout = TimeSpan.FromSeconds(10);
        d.HeartbeatInterval = TimeSpan.FromSeconds(2);
    }
}
